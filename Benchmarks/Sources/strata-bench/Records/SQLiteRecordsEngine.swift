import CSQLite
import Foundation
import StrataRecords

/// The SQLite baselines of `strata-bench records`: Core Data's table layout (`Z_PK`, `Z_ENT`,
/// `Z_OPT`, `Z`-prefixed columns, an index on the to-one) in WAL mode with
/// `synchronous=NORMAL`, and the derived attributes kept by triggers, either
/// - **recount** (`sqlite-recount`): one trigger per derived attribute and event that
///   recomputes the value from its sources, as Core Data generates
///   (`UPDATE … SET ZITEMCOUNT = (SELECT IFNULL(COUNT(Z_PK), 0) FROM ZITEM WHERE ZLIST = …)`), or
/// - **incremental** (`sqlite-incremental`): hand-written triggers that add and subtract.
///
/// `canonical()` is Strata's own folding registered as a SQL function (SQLite's `lower()` folds
/// ASCII only), so both engines store the same search names.
final class SQLiteRecordsEngine: RecordsEngine {
    static let fileName = "records.sqlite"
    static func configuration(_ name: RecordsEngineName) -> String {
        "\(name.rawValue): sqlite \(String(cString: sqlite3_libversion())), WAL, synchronous=NORMAL, cache 256 MiB, "
            + "Core Data layout, "
            + (name == .sqliteRecount ? "recount triggers (Core Data's), one per derived attribute and event"
                : "hand-written incremental triggers (count ± 1, total ± amount)")
            + "; prefix search as an index range on canonical(prefix); notes in an FTS5 table "
            + "(unicode61 remove_diacritics 2), searched with MATCH … ORDER BY rank LIMIT 20"
    }

    static let tables = """
        CREATE TABLE IF NOT EXISTS ZTODOLIST(Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR,
            ZITEMCOUNT INTEGER, ZTOTAL DECIMAL, ZSEARCHNAME VARCHAR);
        CREATE TABLE IF NOT EXISTS ZITEM(Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZLIST INTEGER,
            ZTITLE VARCHAR, ZSKU VARCHAR, ZAMOUNT DECIMAL, ZLISTNAME VARCHAR);
        CREATE INDEX IF NOT EXISTS ZITEM_ZLIST_INDEX ON ZITEM(ZLIST);
        CREATE INDEX IF NOT EXISTS ZITEM_ZSKU_INDEX ON ZITEM(ZSKU);
        CREATE INDEX IF NOT EXISTS ZTODOLIST_ZSEARCHNAME_INDEX ON ZTODOLIST(ZSEARCHNAME);
        CREATE VIRTUAL TABLE IF NOT EXISTS ZNOTE USING fts5(ZTITLE, ZBODY, tokenize = 'unicode61 remove_diacritics 2');
        """

    /// Triggers both variants share: the search name, and the copies of a list's name.
    static let commonTriggers = """
        CREATE TRIGGER IF NOT EXISTS Z_DA_ZTODOLIST_searchName_INSERT AFTER INSERT ON ZTODOLIST FOR EACH ROW BEGIN
            UPDATE ZTODOLIST SET ZSEARCHNAME = canonical(NEW.ZNAME) WHERE Z_PK = NEW.Z_PK; END;
        CREATE TRIGGER IF NOT EXISTS Z_DA_ZTODOLIST_searchName_UPDATE AFTER UPDATE OF ZNAME ON ZTODOLIST FOR EACH ROW BEGIN
            UPDATE ZTODOLIST SET ZSEARCHNAME = canonical(NEW.ZNAME) WHERE Z_PK = NEW.Z_PK; END;
        CREATE TRIGGER IF NOT EXISTS Z_DA_ZITEM_listName_INSERT AFTER INSERT ON ZITEM FOR EACH ROW WHEN NEW.ZLIST IS NOT NULL BEGIN
            UPDATE ZITEM SET ZLISTNAME = (SELECT ZNAME FROM ZTODOLIST WHERE Z_PK = NEW.ZLIST) WHERE Z_PK = NEW.Z_PK; END;
        CREATE TRIGGER IF NOT EXISTS Z_DA_ZITEM_listName_UPDATE_ZLIST AFTER UPDATE OF ZLIST ON ZITEM FOR EACH ROW BEGIN
            UPDATE ZITEM SET ZLISTNAME = (SELECT ZNAME FROM ZTODOLIST WHERE Z_PK = NEW.ZLIST) WHERE Z_PK = NEW.Z_PK; END;
        CREATE TRIGGER IF NOT EXISTS Z_DA_ZTODOLIST_listName_UPDATE AFTER UPDATE OF ZNAME ON ZTODOLIST FOR EACH ROW BEGIN
            UPDATE ZITEM SET ZLISTNAME = NEW.ZNAME WHERE ZLIST = NEW.Z_PK; END;
        """

    static let count = "(SELECT IFNULL(COUNT(Z_PK), 0) FROM ZITEM WHERE ZLIST = ZTODOLIST.Z_PK)"
    static let total = "(SELECT IFNULL(SUM(ZAMOUNT), 0) FROM ZITEM WHERE ZLIST = ZTODOLIST.Z_PK)"

    static let recountTriggers = """
        CREATE TRIGGER IF NOT EXISTS Z_DA_ZITEM_itemCount_INSERT AFTER INSERT ON ZITEM FOR EACH ROW WHEN NEW.ZLIST IS NOT NULL BEGIN
            UPDATE ZTODOLIST SET ZITEMCOUNT = \(count) WHERE Z_PK = NEW.ZLIST; END;
        CREATE TRIGGER IF NOT EXISTS Z_DA_ZITEM_total_INSERT AFTER INSERT ON ZITEM FOR EACH ROW WHEN NEW.ZLIST IS NOT NULL BEGIN
            UPDATE ZTODOLIST SET ZTOTAL = \(total) WHERE Z_PK = NEW.ZLIST; END;
        CREATE TRIGGER IF NOT EXISTS Z_DA_ZITEM_itemCount_UPDATE AFTER UPDATE OF ZLIST ON ZITEM FOR EACH ROW BEGIN
            UPDATE ZTODOLIST SET ZITEMCOUNT = \(count) WHERE Z_PK IN (OLD.ZLIST, NEW.ZLIST); END;
        CREATE TRIGGER IF NOT EXISTS Z_DA_ZITEM_total_UPDATE AFTER UPDATE OF ZLIST, ZAMOUNT ON ZITEM FOR EACH ROW BEGIN
            UPDATE ZTODOLIST SET ZTOTAL = \(total) WHERE Z_PK IN (OLD.ZLIST, NEW.ZLIST); END;
        CREATE TRIGGER IF NOT EXISTS Z_DA_ZITEM_itemCount_DELETE AFTER DELETE ON ZITEM FOR EACH ROW WHEN OLD.ZLIST IS NOT NULL BEGIN
            UPDATE ZTODOLIST SET ZITEMCOUNT = \(count) WHERE Z_PK = OLD.ZLIST; END;
        CREATE TRIGGER IF NOT EXISTS Z_DA_ZITEM_total_DELETE AFTER DELETE ON ZITEM FOR EACH ROW WHEN OLD.ZLIST IS NOT NULL BEGIN
            UPDATE ZTODOLIST SET ZTOTAL = \(total) WHERE Z_PK = OLD.ZLIST; END;
        """

    static let incrementalTriggers = """
        CREATE TRIGGER IF NOT EXISTS ZI_ZITEM_INSERT AFTER INSERT ON ZITEM FOR EACH ROW WHEN NEW.ZLIST IS NOT NULL BEGIN
            UPDATE ZTODOLIST SET ZITEMCOUNT = ZITEMCOUNT + 1, ZTOTAL = ZTOTAL + NEW.ZAMOUNT WHERE Z_PK = NEW.ZLIST; END;
        CREATE TRIGGER IF NOT EXISTS ZI_ZITEM_UPDATE AFTER UPDATE OF ZLIST, ZAMOUNT ON ZITEM FOR EACH ROW BEGIN
            UPDATE ZTODOLIST SET ZITEMCOUNT = ZITEMCOUNT - 1, ZTOTAL = ZTOTAL - OLD.ZAMOUNT WHERE Z_PK = OLD.ZLIST;
            UPDATE ZTODOLIST SET ZITEMCOUNT = ZITEMCOUNT + 1, ZTOTAL = ZTOTAL + NEW.ZAMOUNT WHERE Z_PK = NEW.ZLIST; END;
        CREATE TRIGGER IF NOT EXISTS ZI_ZITEM_DELETE AFTER DELETE ON ZITEM FOR EACH ROW WHEN OLD.ZLIST IS NOT NULL BEGIN
            UPDATE ZTODOLIST SET ZITEMCOUNT = ZITEMCOUNT - 1, ZTOTAL = ZTOTAL - OLD.ZAMOUNT WHERE Z_PK = OLD.ZLIST; END;
        """

    private let db: SQLiteDatabase
    private let name: RecordsEngineName
    private let begin, commit, beginRead, insertList, insertItem, moveItem, rename, prefix, sku: OpaquePointer
    private let insertNote, searchNote, filterNote, updateNote, countNotes: OpaquePointer

    private init(db: SQLiteDatabase, name: RecordsEngineName) throws {
        self.db = db
        self.name = name
        begin = try db.prepare("BEGIN IMMEDIATE")
        beginRead = try db.prepare("BEGIN")
        commit = try db.prepare("COMMIT")
        insertList = try db.prepare("INSERT INTO ZTODOLIST(Z_PK, Z_ENT, Z_OPT, ZNAME, ZITEMCOUNT, ZTOTAL) VALUES (?, 1, 1, ?, 0, 0)")
        insertItem = try db.prepare("INSERT INTO ZITEM(Z_PK, Z_ENT, Z_OPT, ZLIST, ZTITLE, ZSKU, ZAMOUNT) VALUES (?, 2, 1, ?, ?, ?, ?)")
        moveItem = try db.prepare("UPDATE ZITEM SET ZLIST = ?, Z_OPT = Z_OPT + 1 WHERE Z_PK = ?")
        rename = try db.prepare("UPDATE ZTODOLIST SET ZNAME = ?, Z_OPT = Z_OPT + 1 WHERE Z_PK = ?")
        prefix = try db.prepare("SELECT Z_PK FROM ZTODOLIST WHERE ZSEARCHNAME >= ? AND ZSEARCHNAME < ?")
        sku = try db.prepare("SELECT Z_PK FROM ZITEM WHERE ZSKU = ?")
        insertNote = try db.prepare("INSERT INTO ZNOTE(rowid, ZTITLE, ZBODY) VALUES (?, ?, ?)")
        searchNote = try db.prepare("SELECT rowid FROM ZNOTE WHERE ZNOTE MATCH ? ORDER BY rank LIMIT \(TextData.resultsShown)")
        updateNote = try db.prepare("UPDATE ZNOTE SET ZBODY = ? WHERE rowid = ?")
        countNotes = try db.prepare("SELECT COUNT(*) FROM ZNOTE WHERE ZNOTE MATCH ?")
        filterNote = try db.prepare("SELECT rowid FROM ZNOTE WHERE ZTITLE MATCH ?")
    }

    static func open(directory: String, name: RecordsEngineName) throws -> SQLiteRecordsEngine {
        let db = try SQLiteDatabase(path: directory + "/" + fileName, synchronous: "NORMAL")
        try registerCanonical(db)
        try db.execute(tables)
        try createTriggers(db, name)
        return try SQLiteRecordsEngine(db: db, name: name)
    }

    private static func createTriggers(_ db: SQLiteDatabase, _ name: RecordsEngineName) throws {
        try db.execute(commonTriggers + (name == .sqliteRecount ? recountTriggers : incrementalTriggers))
    }

    /// `canonical(text)`: Strata's case- and diacritic-folding, deterministic.
    private static func registerCanonical(_ db: SQLiteDatabase) throws {
        let rc = sqlite3_create_function_v2(db.handle, "canonical", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { ctx, _, args in
            guard let arg = args?[0], sqlite3_value_type(arg) != SQLITE_NULL, let text = sqlite3_value_text(arg) else {
                sqlite3_result_null(ctx)
                return
            }
            sqlite3_result_text(ctx, TextFolding.canonical(String(cString: text)), -1, SQLiteDatabase.transientBytes)
        }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw SQLiteDatabase.error(db.handle, rc, "create_function canonical") }
    }

    private func write(_ body: () throws -> Void) throws {
        try db.run(begin)
        do { try body() } catch {
            try? db.execute("ROLLBACK")
            throw error
        }
        try db.run(commit)
    }

    private func bindItem(_ p: Placement) {
        let j = Int(p.item)
        sqlite3_bind_int64(insertItem, 1, Int64(j + 1))
        sqlite3_bind_int64(insertItem, 2, Int64(p.list) + 1)
        db.bind(insertItem, 3, text: RecordsData.title(j))
        db.bind(insertItem, 4, text: RecordsData.sku(j))
        sqlite3_bind_double(insertItem, 5, Double(RecordsData.amountCents(j)) / 100)
    }

    /// Rows go in without triggers, the derived columns are filled in one pass each, and the
    /// triggers come back: what a migration script would do, far faster than row by row.
    func load(lists: Int, placements: [Placement]) throws {
        let triggers = try names("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        try write {
            for t in triggers { try db.execute("DROP TRIGGER \(t)") }
            for i in 0..<lists {
                sqlite3_bind_int64(insertList, 1, Int64(i + 1))
                db.bind(insertList, 2, text: RecordsData.listName(i))
                try db.run(insertList)
            }
            for p in placements {
                bindItem(p)
                try db.run(insertItem)
            }
            try db.execute("""
                UPDATE ZTODOLIST SET ZSEARCHNAME = canonical(ZNAME), ZITEMCOUNT = \(Self.count), ZTOTAL = \(Self.total);
                UPDATE ZITEM SET ZLISTNAME = (SELECT ZNAME FROM ZTODOLIST WHERE Z_PK = ZITEM.ZLIST);
                """)
            try Self.createTriggers(db, name)
        }
    }

    private func names(_ sql: String) throws -> [String] {
        let stmt = try db.prepare(sql)
        var out: [String] = []
        try db.forEachRow(stmt) { out.append(String(cString: sqlite3_column_text($0, 0))) }
        return out
    }

    func insertLists(_ lists: Range<Int>) throws {
        try write {
            for i in lists {
                sqlite3_bind_int64(insertList, 1, Int64(i + 1))
                db.bind(insertList, 2, text: RecordsData.listName(i))
                try db.run(insertList)
            }
        }
    }

    func insertItems(_ items: ArraySlice<Placement>) throws {
        try write {
            for p in items {
                bindItem(p)
                try db.run(insertItem)
            }
        }
    }

    func moveItems(_ moves: ArraySlice<Placement>) throws {
        try write {
            for m in moves {
                sqlite3_bind_int64(moveItem, 1, Int64(m.list) + 1)
                sqlite3_bind_int64(moveItem, 2, Int64(m.item) + 1)
                try db.run(moveItem)
            }
        }
    }

    func renameList(_ list: Int, to name: String) throws {
        try write {
            db.bind(rename, 1, text: name)
            sqlite3_bind_int64(rename, 2, Int64(list + 1))
            try db.run(rename)
        }
    }

    /// The application folds the prefix (as a Core Data app searching a `canonical:` attribute
    /// must) and asks for the index range `[p, p + U+10FFFF)`.
    func prefixSearch(_ prefixes: ArraySlice<String>) throws -> Int {
        try db.run(beginRead)
        var found = 0
        for p in prefixes {
            let folded = TextFolding.canonical(p)
            db.bind(prefix, 1, text: folded)
            db.bind(prefix, 2, text: folded + "\u{10FFFF}")
            try db.forEachRow(prefix) { _ in found += 1 }
        }
        try db.run(commit)
        return found
    }

    func fetchBySKU(_ skus: ArraySlice<String>) throws -> Int { try countRows(sku, for: skus) }

    /// Runs `statement` once per value (its one parameter) in one read transaction; the rows found.
    private func countRows(_ statement: OpaquePointer, for values: ArraySlice<String>) throws -> Int {
        try db.run(beginRead)
        var found = 0
        for value in values {
            db.bind(statement, 1, text: value)
            try db.forEachRow(statement) { _ in found += 1 }
        }
        try db.run(commit)
        return found
    }

    func insertNotes(_ notes: Range<Int>, texts: [TextData.Note]) throws {
        try write {
            for i in notes {
                let note = texts[i]
                sqlite3_bind_int64(insertNote, 1, Int64(i + 1))
                db.bind(insertNote, 2, text: note.title)
                db.bind(insertNote, 3, text: note.body)
                try db.run(insertNote)
            }
        }
    }

    func searchNotes(_ queries: ArraySlice<String>) throws -> Int { try countRows(searchNote, for: queries) }

    func filterNotes(_ queries: ArraySlice<String>) throws -> Int { try countRows(filterNote, for: queries) }

    func updateNotes(_ updates: ArraySlice<(note: Int, body: String)>) throws {
        try write {
            for (i, body) in updates {
                db.bind(updateNote, 1, text: body)
                sqlite3_bind_int64(updateNote, 2, Int64(i + 1))
                try db.run(updateNote)
            }
        }
    }

    func updateAmounts(below limitCents: Int64, to cents: Int64) throws -> Int {
        try write { try db.execute("UPDATE ZITEM SET ZAMOUNT = \(Double(cents) / 100) WHERE ZAMOUNT < \(Double(limitCents) / 100)") }
        return Int(sqlite3_changes(db.handle))
    }

    func deleteItems(below limitCents: Int64) throws -> Int {
        try write { try db.execute("DELETE FROM ZITEM WHERE ZAMOUNT < \(Double(limitCents) / 100)") }
        return Int(sqlite3_changes(db.handle))
    }

    func digest() throws -> RecordsDigest {
        var d = RecordsDigest()
        d.lists = Int(try db.integer("SELECT COUNT(*) FROM ZTODOLIST"))
        d.items = Int(try db.integer("SELECT COUNT(*) FROM ZITEM"))
        d.itemCountSum = Int(try db.integer("SELECT IFNULL(SUM(ZITEMCOUNT), 0) FROM ZTODOLIST"))
        d.totalCents = try db.integer("SELECT IFNULL(SUM(CAST(ROUND(ZTOTAL * 100) AS INTEGER)), 0) FROM ZTODOLIST")
        d.copiesRight = Int(try db.integer("SELECT COUNT(*) FROM ZITEM i JOIN ZTODOLIST l ON l.Z_PK = i.ZLIST WHERE i.ZLISTNAME = l.ZNAME"))
        d.searchNamesRight = Int(try db.integer("SELECT COUNT(*) FROM ZTODOLIST WHERE ZSEARCHNAME = canonical(ZNAME)"))
        d.notes = Int(try db.integer("SELECT COUNT(*) FROM ZNOTE"))
        if d.notes > 0 {
            for word in TextData.probeWords {
                db.bind(countNotes, 1, text: word)
                try db.forEachRow(countNotes) { row in d.notesFound += Int(sqlite3_column_int64(row, 0)) }
            }
        }
        return d
    }

    func close() throws { try db.close() }

    static func checkStore(directory: String) -> StoreCheck? { nil }
}
