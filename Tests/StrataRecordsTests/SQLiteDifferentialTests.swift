import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// Differential: the same random transactions run on Strata and on SQLite with the triggers
/// Core Data would generate for the same derived attributes (each derived value recounted from
/// its sources by a trigger; Strata's text functions registered as SQL functions). After every
/// transaction both must hold the same objects with the same derived values.
@Suite struct SQLiteDifferentialTests {
    static let seeds: [UInt64] = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init).map { [$0] }
        ?? [0x5A1E_0001, 0x5A1E_0002]

    @Test(arguments: seeds)
    func derivedValuesAgreeWithSQLiteTriggers(seed: UInt64) throws {
        var run = try DifferentialRun(seed: seed)
        try run.run(transactions: 800)
    }

    @Test func theTriggersThemselvesWork() throws {
        // The reference must be right before it can judge: a hand-checked transaction.
        let db = try SQLiteConnection()
        try db.execute(DifferentialRun.schema)
        try db.query("INSERT INTO ZSHELF(Z_PK, ZNAME) VALUES (1, 'Café Crème')")
        try db.query("INSERT INTO ZBOOK(Z_PK, ZTITLE, ZPAGES, ZWEIGHT, ZSHELF) VALUES (1, 'Ä', 10, 1.5, 1), (2, 'b', 30, NULL, 1)")
        try db.query("INSERT INTO ZLABEL(Z_PK, ZTEXT) VALUES (1, 'x')")
        try db.query("INSERT INTO Z_1LABELS(Z_1SHELVES, Z_3LABELS) VALUES (1, 1)")
        let shelf = try db.query("SELECT ZBOOKCOUNT, ZPAGESUM, ZWEIGHTSUM, ZAVERAGEPAGES, ZFEWESTPAGES, ZMOSTPAGES, ZSEARCHNAME, ZUPPERNAME, ZLABELCOUNT FROM ZSHELF")
        #expect(shelf == [[.int(2), .int(40), .double(1.5), .double(20), .int(10), .int(30), .string("cafe creme"), .string("CAFÉ CRÈME"), .int(1)]])
        let book = try db.query("SELECT ZSHELFNAME, ZSHELFSEARCH, ZLOWERTITLE, ZSPREAD FROM ZBOOK WHERE Z_PK = 1")
        #expect(book == [[.string("Café Crème"), .string("cafe creme"), .string("ä"), .int(21)]])
        #expect(try db.query("SELECT ZSHELFCOUNT, ZBOOKTOTAL, ZPAGETOTAL FROM ZLABEL") == [[.int(1), .int(2), .int(40)]])
        try db.query("UPDATE ZBOOK SET ZSHELF = NULL WHERE Z_PK = 2")
        #expect(try db.query("SELECT ZBOOKTOTAL, ZPAGETOTAL FROM ZLABEL") == [[.int(1), .int(10)]])
    }
}

/// One seeded differential run.
struct DifferentialRun {
    static func model() throws -> Model {
        try Model {
            Entity("Shelf") {
                AttributeDescription("name", .string)
                RelationshipDescription("books", toMany: "Book", inverse: "shelf", deleteRule: .cascade)
                RelationshipDescription("labels", toMany: "Label", inverse: "shelves")
                DerivedAttributeDescription("bookCount", .int64, "books.@count")
                DerivedAttributeDescription("pageSum", .int64, "books.pages.@sum")
                DerivedAttributeDescription("weightSum", .double, "books.weight.@sum")
                DerivedAttributeDescription("averagePages", .double, "books.pages.@avg", optional: true)
                DerivedAttributeDescription("fewestPages", .int64, "books.pages.@min", optional: true)
                DerivedAttributeDescription("mostPages", .int64, "books.pages.@max", optional: true)
                DerivedAttributeDescription("searchName", .string, "canonical:(name)")
                DerivedAttributeDescription("lowerName", .string, "lowercase:(name)")
                DerivedAttributeDescription("upperName", .string, "uppercase:(name)")
                DerivedAttributeDescription("labelCount", .int64, "labels.@count")
            }
            Entity("Book") {
                AttributeDescription("title", .string)
                AttributeDescription("pages", .int64, default: 0)
                AttributeDescription("weight", .double, optional: true)
                RelationshipDescription("shelf", toOne: "Shelf", inverse: "books")
                DerivedAttributeDescription("shelfName", .string, "shelf.name", optional: true)
                DerivedAttributeDescription("shelfSearch", .string, "canonical:(shelf.name)", optional: true)
                DerivedAttributeDescription("lowerTitle", .string, "lowercase:(title)")
                DerivedAttributeDescription("spread", .int64, "pages * 2 + 1")
            }
            Entity("Label") {
                AttributeDescription("text", .string)
                RelationshipDescription("shelves", toMany: "Shelf", inverse: "labels")
                DerivedAttributeDescription("shelfCount", .int64, "shelves.@count")
                DerivedAttributeDescription("bookTotal", .int64, "shelves.bookCount.@sum")
                DerivedAttributeDescription("pageTotal", .int64, "shelves.pageSum.@sum")
            }
        }
    }

    /// Core Data's layout (Z-prefixed tables and columns, `Z_1LABELS` join table) with one
    /// recount trigger per source change, as Core Data generates for derived attributes.
    static let schema = """
        CREATE TABLE ZSHELF(Z_PK INTEGER PRIMARY KEY, ZNAME TEXT, ZBOOKCOUNT INTEGER DEFAULT 0,
            ZPAGESUM INTEGER DEFAULT 0, ZWEIGHTSUM REAL DEFAULT 0.0, ZAVERAGEPAGES REAL, ZFEWESTPAGES INTEGER,
            ZMOSTPAGES INTEGER, ZSEARCHNAME TEXT, ZLOWERNAME TEXT, ZUPPERNAME TEXT, ZLABELCOUNT INTEGER DEFAULT 0);
        CREATE TABLE ZBOOK(Z_PK INTEGER PRIMARY KEY, ZTITLE TEXT, ZPAGES INTEGER, ZWEIGHT REAL, ZSHELF INTEGER,
            ZSHELFNAME TEXT, ZSHELFSEARCH TEXT, ZLOWERTITLE TEXT, ZSPREAD INTEGER);
        CREATE INDEX ZBOOK_ZSHELF_INDEX ON ZBOOK(ZSHELF);
        CREATE TABLE ZLABEL(Z_PK INTEGER PRIMARY KEY, ZTEXT TEXT, ZSHELFCOUNT INTEGER DEFAULT 0,
            ZBOOKTOTAL INTEGER DEFAULT 0, ZPAGETOTAL INTEGER DEFAULT 0);
        CREATE TABLE Z_1LABELS(Z_1SHELVES INTEGER, Z_3LABELS INTEGER, PRIMARY KEY (Z_1SHELVES, Z_3LABELS));
        CREATE INDEX Z_1LABELS_Z_3LABELS ON Z_1LABELS(Z_3LABELS, Z_1SHELVES);

        -- Shelf aggregates over books: recounted from scratch for the shelf a book entered or left.
        CREATE TRIGGER ZQ_ZBOOK_INSERT AFTER INSERT ON ZBOOK BEGIN
            UPDATE ZBOOK SET ZSHELFNAME = (SELECT ZNAME FROM ZSHELF WHERE Z_PK = NEW.ZSHELF),
                ZSHELFSEARCH = canonical((SELECT ZNAME FROM ZSHELF WHERE Z_PK = NEW.ZSHELF)),
                ZLOWERTITLE = strata_lower(NEW.ZTITLE), ZSPREAD = NEW.ZPAGES * 2 + 1 WHERE Z_PK = NEW.Z_PK;
            UPDATE ZSHELF SET \(shelfRecount) WHERE Z_PK = NEW.ZSHELF;
        END;
        CREATE TRIGGER ZQ_ZBOOK_UPDATE AFTER UPDATE OF ZSHELF, ZPAGES, ZWEIGHT, ZTITLE ON ZBOOK BEGIN
            UPDATE ZBOOK SET ZSHELFNAME = (SELECT ZNAME FROM ZSHELF WHERE Z_PK = NEW.ZSHELF),
                ZSHELFSEARCH = canonical((SELECT ZNAME FROM ZSHELF WHERE Z_PK = NEW.ZSHELF)),
                ZLOWERTITLE = strata_lower(NEW.ZTITLE), ZSPREAD = NEW.ZPAGES * 2 + 1 WHERE Z_PK = NEW.Z_PK;
            UPDATE ZSHELF SET \(shelfRecount) WHERE Z_PK IN (OLD.ZSHELF, NEW.ZSHELF);
        END;
        CREATE TRIGGER ZQ_ZBOOK_DELETE AFTER DELETE ON ZBOOK BEGIN
            UPDATE ZSHELF SET \(shelfRecount) WHERE Z_PK = OLD.ZSHELF;
        END;

        -- Shelf strings, and the copies of the shelf's name in its books.
        CREATE TRIGGER ZQ_ZSHELF_INSERT AFTER INSERT ON ZSHELF BEGIN
            UPDATE ZSHELF SET ZSEARCHNAME = canonical(NEW.ZNAME), ZLOWERNAME = strata_lower(NEW.ZNAME),
                ZUPPERNAME = strata_upper(NEW.ZNAME) WHERE Z_PK = NEW.Z_PK;
        END;
        CREATE TRIGGER ZQ_ZSHELF_NAME AFTER UPDATE OF ZNAME ON ZSHELF BEGIN
            UPDATE ZSHELF SET ZSEARCHNAME = canonical(NEW.ZNAME), ZLOWERNAME = strata_lower(NEW.ZNAME),
                ZUPPERNAME = strata_upper(NEW.ZNAME) WHERE Z_PK = NEW.Z_PK;
            UPDATE ZBOOK SET ZSHELFNAME = NEW.ZNAME, ZSHELFSEARCH = canonical(NEW.ZNAME) WHERE ZSHELF = NEW.Z_PK;
        END;

        -- Label aggregates over shelves (many-to-many), including sums of the shelves' derived counts.
        CREATE TRIGGER ZQ_Z_1LABELS_INSERT AFTER INSERT ON Z_1LABELS BEGIN
            UPDATE ZLABEL SET \(labelRecount) WHERE Z_PK = NEW.Z_3LABELS;
            UPDATE ZSHELF SET ZLABELCOUNT = (SELECT COUNT(*) FROM Z_1LABELS WHERE Z_1SHELVES = ZSHELF.Z_PK) WHERE Z_PK = NEW.Z_1SHELVES;
        END;
        CREATE TRIGGER ZQ_Z_1LABELS_DELETE AFTER DELETE ON Z_1LABELS BEGIN
            UPDATE ZLABEL SET \(labelRecount) WHERE Z_PK = OLD.Z_3LABELS;
            UPDATE ZSHELF SET ZLABELCOUNT = (SELECT COUNT(*) FROM Z_1LABELS WHERE Z_1SHELVES = ZSHELF.Z_PK) WHERE Z_PK = OLD.Z_1SHELVES;
        END;
        CREATE TRIGGER ZQ_ZSHELF_COUNTS AFTER UPDATE OF ZBOOKCOUNT, ZPAGESUM ON ZSHELF BEGIN
            UPDATE ZLABEL SET \(labelRecount) WHERE Z_PK IN (SELECT Z_3LABELS FROM Z_1LABELS WHERE Z_1SHELVES = NEW.Z_PK);
        END;
        """

    static let shelfRecount = """
        ZBOOKCOUNT = (SELECT COUNT(*) FROM ZBOOK WHERE ZSHELF = ZSHELF.Z_PK),
        ZPAGESUM = (SELECT COALESCE(SUM(ZPAGES), 0) FROM ZBOOK WHERE ZSHELF = ZSHELF.Z_PK),
        ZWEIGHTSUM = (SELECT COALESCE(SUM(ZWEIGHT), 0.0) FROM ZBOOK WHERE ZSHELF = ZSHELF.Z_PK),
        ZAVERAGEPAGES = (SELECT AVG(ZPAGES) FROM ZBOOK WHERE ZSHELF = ZSHELF.Z_PK),
        ZFEWESTPAGES = (SELECT MIN(ZPAGES) FROM ZBOOK WHERE ZSHELF = ZSHELF.Z_PK),
        ZMOSTPAGES = (SELECT MAX(ZPAGES) FROM ZBOOK WHERE ZSHELF = ZSHELF.Z_PK)
        """

    static let labelRecount = """
        ZSHELFCOUNT = (SELECT COUNT(*) FROM Z_1LABELS WHERE Z_3LABELS = ZLABEL.Z_PK),
        ZBOOKTOTAL = (SELECT COALESCE(SUM(s.ZBOOKCOUNT), 0) FROM Z_1LABELS j JOIN ZSHELF s ON s.Z_PK = j.Z_1SHELVES WHERE j.Z_3LABELS = ZLABEL.Z_PK),
        ZPAGETOTAL = (SELECT COALESCE(SUM(s.ZPAGESUM), 0) FROM Z_1LABELS j JOIN ZSHELF s ON s.Z_PK = j.Z_1SHELVES WHERE j.Z_3LABELS = ZLABEL.Z_PK)
        """

    /// Each entity's derived attributes and the SQLite columns that hold the same values.
    static let compared: [(entity: String, table: String, columns: [(String, String)])] = [
        ("Shelf", "ZSHELF", [("bookCount", "ZBOOKCOUNT"), ("pageSum", "ZPAGESUM"), ("weightSum", "ZWEIGHTSUM"),
                             ("averagePages", "ZAVERAGEPAGES"), ("fewestPages", "ZFEWESTPAGES"), ("mostPages", "ZMOSTPAGES"),
                             ("searchName", "ZSEARCHNAME"), ("lowerName", "ZLOWERNAME"), ("upperName", "ZUPPERNAME"),
                             ("labelCount", "ZLABELCOUNT")]),
        ("Book", "ZBOOK", [("shelfName", "ZSHELFNAME"), ("shelfSearch", "ZSHELFSEARCH"), ("lowerTitle", "ZLOWERTITLE"),
                           ("spread", "ZSPREAD")]),
        ("Label", "ZLABEL", [("shelfCount", "ZSHELFCOUNT"), ("bookTotal", "ZBOOKTOTAL"), ("pageTotal", "ZPAGETOTAL")]),
    ]

    static let names = ["Café", "café", "CAFÉ CRÈME", "Straße", "STRASSE", "naïve", "Ærø", "İstanbul", "ǅemal",
                        "Ωmega", "ﬁsh", "Zoë", "ß", "Ünïcödé", "日本語", "x", "",
                        // Final sigma, Hangul that NFC joins, an NFD spelling of one above.
                        "ΟΔΟΣ", "ΣΑΣ ΣΑΣ.", "\u{AC00}\u{11A8}", "Cafe\u{301}"]

    let seed: UInt64
    var rng: SplitMix64
    let store: RecordStore
    let db: SQLiteConnection
    var shelves: [UInt64] = [], books: [UInt64] = [], labels: [UInt64] = []
    var commits = 0, rollbacks = 0

    init(seed: UInt64) throws {
        self.seed = seed
        rng = SplitMix64(seed: seed)
        store = try makeStore(try Self.model())
        db = try SQLiteConnection()
        try db.execute(Self.schema)
    }

    mutating func pick<T>(_ xs: [T]) -> T? { xs.isEmpty ? nil : xs[Int(rng.next() % UInt64(xs.count))] }
    mutating func chance(_ p: Double) -> Bool { rng.unit() < p }

    mutating func run(transactions: Int) throws {
        for t in 0..<transactions {
            try transaction(t)
            if t % 150 == 149 {
                let problems = try store.read { try $0.checkRecords() }
                for p in problems { Issue.record("seed \(seed), after transaction \(t): \(p)") }
            }
        }
        #expect(commits > transactions / 2 && rollbacks > 0, "seed \(seed): \(commits) commits, \(rollbacks) rollbacks")
        print("[sqlite differential] seed \(seed): \(commits) commits, \(rollbacks) rollbacks; "
              + "\(shelves.count) shelves, \(books.count) books, \(labels.count) labels at the end")
    }

    struct Rollback: Error {}

    mutating func transaction(_ t: Int) throws {
        let saved = (shelves, books, labels)
        let ops = 1 + Int(rng.next() % 8)
        let rollBack = chance(0.05)
        try db.execute("BEGIN")
        let store = self.store
        do {
            try store.write { tx in
                for _ in 0..<ops { try self.operation(tx) }
                if rollBack { throw Rollback() }
            }
            try db.execute("COMMIT")
            commits += 1
        } catch is Rollback {
            try db.execute("ROLLBACK")
            (shelves, books, labels) = saved
            rollbacks += 1
        }
        try compare("transaction \(t)")
    }

    /// One random operation, on both stores.
    mutating func operation(_ tx: RecordTransaction) throws {
        func id(_ e: String, _ pk: UInt64) -> ObjectID { ObjectID(entity: e, primaryKey: pk) }
        switch rng.next() % 100 {
        case 0..<10:
            let name = pick(Self.names)!
            let pk = try tx.insert("Shelf", ["name": name]).primaryKey
            try db.query("INSERT INTO ZSHELF(Z_PK, ZNAME) VALUES (?, ?)", [.int(Int64(pk)), .string(name)])
            shelves.append(pk)
        case 10..<40:
            let shelf = chance(0.9) ? pick(shelves) : nil
            let title = pick(Self.names)!, pages = Int64(rng.next() % 1_000)
            let weight: Double? = chance(0.2) ? nil : rng.unit() * 900
            var values: [String: any ValueConvertible] = ["title": title, "pages": Int(pages)]
            if let weight { values["weight"] = weight }
            if let shelf { values["shelf"] = id("Shelf", shelf) }
            let pk = try tx.insert("Book", values).primaryKey
            try db.query("INSERT INTO ZBOOK(Z_PK, ZTITLE, ZPAGES, ZWEIGHT, ZSHELF) VALUES (?, ?, ?, ?, ?)",
                         [.int(Int64(pk)), .string(title), .int(pages), weight.map(StoredValue.double) ?? .null,
                          shelf.map { .int(Int64($0)) } ?? .null])
            books.append(pk)
        case 40..<55:
            guard let pk = pick(books) else { return }
            switch rng.next() % 3 {
            case 0:
                let pages = Int64(rng.next() % 1_000)
                try tx.update(id("Book", pk), ["pages": Int(pages)])
                try db.query("UPDATE ZBOOK SET ZPAGES = ? WHERE Z_PK = ?", [.int(pages), .int(Int64(pk))])
            case 1:
                let weight: StoredValue = chance(0.2) ? .null : .double(rng.unit() * 900)
                try tx.update(id("Book", pk), ["weight": weight])
                try db.query("UPDATE ZBOOK SET ZWEIGHT = ? WHERE Z_PK = ?", [weight, .int(Int64(pk))])
            default:
                let title = pick(Self.names)!
                try tx.update(id("Book", pk), ["title": title])
                try db.query("UPDATE ZBOOK SET ZTITLE = ? WHERE Z_PK = ?", [.string(title), .int(Int64(pk))])
            }
        case 55..<70:
            guard let pk = pick(books) else { return }
            let shelf = chance(0.9) ? pick(shelves) : nil
            try tx.set("shelf", of: id("Book", pk), to: shelf.map { id("Shelf", $0) })
            try db.query("UPDATE ZBOOK SET ZSHELF = ? WHERE Z_PK = ?", [shelf.map { .int(Int64($0)) } ?? .null, .int(Int64(pk))])
        case 70..<76:
            guard let pk = pick(shelves) else { return }
            let name = pick(Self.names)!
            try tx.update(id("Shelf", pk), ["name": name])
            try db.query("UPDATE ZSHELF SET ZNAME = ? WHERE Z_PK = ?", [.string(name), .int(Int64(pk))])
        case 76..<83:
            guard let pk = pick(books) else { return }
            try tx.delete(id("Book", pk))
            try db.query("DELETE FROM ZBOOK WHERE Z_PK = ?", [.int(Int64(pk))])
            books.removeAll { $0 == pk }
        case 83..<86:
            // Core Data applies delete rules in the context, then deletes rows: cascade the
            // books, break the label links, delete the shelf.
            guard let pk = pick(shelves) else { return }
            try tx.delete(id("Shelf", pk))
            let cascaded = try db.query("SELECT Z_PK FROM ZBOOK WHERE ZSHELF = ?", [.int(Int64(pk))]).map { row -> UInt64 in
                if case .int(let b) = row[0] { return UInt64(b) }
                return 0
            }
            try db.query("DELETE FROM ZBOOK WHERE ZSHELF = ?", [.int(Int64(pk))])
            try db.query("DELETE FROM Z_1LABELS WHERE Z_1SHELVES = ?", [.int(Int64(pk))])
            try db.query("DELETE FROM ZSHELF WHERE Z_PK = ?", [.int(Int64(pk))])
            shelves.removeAll { $0 == pk }
            books.removeAll { cascaded.contains($0) }
        case 86..<89:
            let text = pick(Self.names)!
            let pk = try tx.insert("Label", ["text": text]).primaryKey
            try db.query("INSERT INTO ZLABEL(Z_PK, ZTEXT) VALUES (?, ?)", [.int(Int64(pk)), .string(text)])
            labels.append(pk)
        case 89..<98:
            guard let l = pick(labels), let s = pick(shelves) else { return }
            let pair: [StoredValue] = [.int(Int64(s)), .int(Int64(l))]
            if chance(0.65) {
                try tx.add(id("Shelf", s), to: "shelves", of: id("Label", l))
                try db.query("INSERT OR IGNORE INTO Z_1LABELS(Z_1SHELVES, Z_3LABELS) VALUES (?, ?)", pair)
            } else {
                try tx.remove(id("Label", l), from: "labels", of: id("Shelf", s))
                try db.query("DELETE FROM Z_1LABELS WHERE Z_1SHELVES = ? AND Z_3LABELS = ?", pair)
            }
        default:
            guard let pk = pick(labels) else { return }
            try tx.delete(id("Label", pk))
            try db.query("DELETE FROM Z_1LABELS WHERE Z_3LABELS = ?", [.int(Int64(pk))])
            try db.query("DELETE FROM ZLABEL WHERE Z_PK = ?", [.int(Int64(pk))])
            labels.removeAll { $0 == pk }
        }
    }

    /// Both stores hold the same objects with the same derived values.
    func compare(_ label: String) throws {
        var mismatches = 0
        try store.read { r in
            for (entity, table, columns) in Self.compared {
                let rows = try db.query("SELECT Z_PK, \(columns.map(\.1).joined(separator: ", ")) FROM \(table) ORDER BY Z_PK")
                let ids = try r.objects(entity)
                #expect(ids.map { StoredValue.int(Int64($0.primaryKey)) } == rows.map { $0[0] },
                        "seed \(seed), \(label): \(entity) objects differ from \(table) rows")
                for (id, row) in zip(ids, rows) {
                    guard let values = try r.values(of: id) else { continue }
                    for (i, (name, column)) in columns.enumerated() {
                        let mine = values[name] ?? .null, theirs = row[i + 1]
                        if !DerivedComparison.agree(mine, theirs) {
                            mismatches += 1
                            if mismatches <= 10 { Issue.record("seed \(seed), \(label): \(id).\(name) = \(mine), SQLite's \(column) = \(theirs)") }
                        }
                    }
                }
            }
        }
        if mismatches > 0 { throw DerivationModelRun.RunStopped(seed: seed, label: label, mismatches: mismatches) }
    }
}
