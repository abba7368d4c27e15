import Foundation
import StrataRecords
import StrataStorage

/// The record layer under test: the benchmark's model (`model()`), default options but
/// `normal` durability.
final class StrataRecordsEngine: RecordsEngine {
    static let fileName = "records.strata"
    static func configuration(_ name: RecordsEngineName) -> String {
        "\(name.rawValue): RecordStore, durability .normal, "
            + (name == .strataHistory ? "persistent history recorded, " : "")
            + "defaults otherwise; TodoList.itemCount = items.@count, "
            + "total = items.amount.@sum (decimal), searchName = canonical:(name) (indexed); Item.listName = list.name, "
            + "sku indexed; Note: word index over (title, body)"
    }

    static func model() throws -> Model {
        try Model {
            Entity("TodoList") {
                AttributeDescription("name", .string)
                RelationshipDescription("items", toMany: "Item", inverse: "list", deleteRule: .cascade)
                DerivedAttributeDescription("itemCount", .int64, "items.@count")
                DerivedAttributeDescription("total", .decimal, "items.amount.@sum")
                DerivedAttributeDescription("searchName", .string, "canonical:(name)")
                FetchIndex("searchName")
            }
            Entity("Item") {
                AttributeDescription("title", .string)
                AttributeDescription("sku", .string)
                AttributeDescription("amount", .decimal, default: Decimal(0))
                RelationshipDescription("list", toOne: "TodoList", inverse: "items")
                DerivedAttributeDescription("listName", .string, "list.name", optional: true)
                FetchIndex("sku")
            }
            Entity("Note") {
                AttributeDescription("title", .string)
                AttributeDescription("body", .string)
                FullTextIndex("title", "body")
            }
        }
    }

    private let store: RecordStore
    /// The queries, prepared once as SQLite's statements are: the search by prefix (folded by
    /// `[cd]`, answered by the `canonical:` index) and the lookup by stock-keeping code.
    private let byPrefix: PreparedFetch
    private let bySKU: PreparedFetch
    /// Notes by the words of their title: a word condition in a fetch.
    private let byTitleWords: PreparedFetch
    /// The writes, prepared once too: rows from arrays of values, no dictionary per row.
    private let listName, newItem, moveItem, newNote, noteBody: PreparedWrite

    private init(store: RecordStore) throws {
        self.store = store
        listName = try store.prepareWrite("TodoList", properties: ["name"])
        newItem = try store.prepareWrite("Item", properties: ["title", "sku", "amount", "list"])
        moveItem = try store.prepareWrite("Item", properties: ["list"])
        newNote = try store.prepareWrite("Note", properties: ["title", "body"])
        noteBody = try store.prepareWrite("Note", properties: ["body"])
        byPrefix = try store.prepare(FetchRequest("TodoList", predicate: PropertyPath("searchName").beginsWith(
            .variable("prefix"), options: [.caseInsensitive, .diacriticInsensitive])))
        bySKU = try store.prepare(FetchRequest("Item", predicate: PropertyPath("sku") == .variable("sku")))
        byTitleWords = try store.prepare(FetchRequest("Note", predicate: PropertyPath("title").containsWords(.variable("q"))))
    }

    static func open(directory: String, name: RecordsEngineName) throws -> StrataRecordsEngine {
        try StrataRecordsEngine(store: try RecordStore(path: directory + "/" + fileName, model: try model(),
                                                       options: StoreOptions(durability: .normal),
                                                       history: name == .strataHistory ? .on : .off))
    }

    private static func list(_ i: Int) -> ObjectID { ObjectID(entity: "TodoList", primaryKey: UInt64(i + 1)) }
    private static func item(_ j: Int) -> ObjectID { ObjectID(entity: "Item", primaryKey: UInt64(j + 1)) }

    func load(lists: Int, placements: [Placement]) throws {
        // Strata has one way in: the same inserts as the timed workloads, in larger transactions.
        for start in stride(from: 0, to: lists, by: 1_000) { try insertLists(start..<min(lists, start + 1_000)) }
        for start in stride(from: 0, to: placements.count, by: 1_000) {
            try insertItems(placements[start..<min(placements.count, start + 1_000)])
        }
    }

    func insertLists(_ lists: Range<Int>) throws {
        try store.write { tx in
            for i in lists {
                let id = try tx.insert(listName, [.string(RecordsData.listName(i))])
                guard id == Self.list(i) else { throw BenchError("strata: list \(i) got \(id)") }
            }
        }
    }

    func insertItems(_ items: ArraySlice<Placement>) throws {
        try store.write { tx in
            for p in items {
                let j = Int(p.item)
                let amount = Decimal(sign: .plus, exponent: -2, significand: Decimal(RecordsData.amountCents(j)))
                let id = try tx.insert(newItem, [.string(RecordsData.title(j)), .string(RecordsData.sku(j)), .decimal(amount),
                                                 Self.list(Int(p.list)).strataValue])
                guard id == Self.item(j) else { throw BenchError("strata: item \(j) got \(id)") }
            }
        }
    }

    func moveItems(_ moves: ArraySlice<Placement>) throws {
        try store.write { tx in
            for m in moves { try tx.update(Self.item(Int(m.item)), moveItem, [Self.list(Int(m.list)).strataValue]) }
        }
    }

    func renameList(_ list: Int, to name: String) throws {
        try store.write { tx in try tx.update(Self.list(list), listName, [.string(name)]) }
    }

    /// Each query sets the one value of an array kept for the loop, as SQLite's side binds its
    /// statement's parameter: the hot-loop form of a prepared fetch (no array made per run).
    func prefixSearch(_ prefixes: ArraySlice<String>) throws -> Int {
        try store.read { r in
            var found = 0
            var values: [StoredValue] = [.null]
            for p in prefixes {
                values[0] = .string(p)
                found += try r.fetch(byPrefix, values: values).count
            }
            return found
        }
    }

    func fetchBySKU(_ skus: ArraySlice<String>) throws -> Int {
        try store.read { r in
            var found = 0
            var values: [StoredValue] = [.null]
            for s in skus {
                values[0] = .string(s)
                found += try r.fetch(bySKU, values: values).count
            }
            return found
        }
    }

    func insertNotes(_ notes: Range<Int>, texts: [TextData.Note]) throws {
        try store.write { tx in
            for i in notes {
                let note = texts[i]
                let id = try tx.insert(newNote, [.string(note.title), .string(note.body)])
                guard id.primaryKey == UInt64(i + 1) else { throw BenchError("strata: note \(i) got \(id)") }
            }
        }
    }

    func searchNotes(_ queries: ArraySlice<String>) throws -> Int {
        try store.read { r in
            var found = 0
            for q in queries { found += try r.search(TextSearch("Note", matching: q, limit: TextData.resultsShown)).count }
            return found
        }
    }

    func filterNotes(_ queries: ArraySlice<String>) throws -> Int {
        try store.read { r in
            var found = 0
            for q in queries { found += try r.fetch(byTitleWords, values: [.string(q)]).count }
            return found
        }
    }

    func updateNotes(_ updates: ArraySlice<(note: Int, body: String)>) throws {
        try store.write { tx in
            for (i, body) in updates {
                try tx.update(ObjectID(entity: "Note", primaryKey: UInt64(i + 1)), noteBody, [.string(body)])
            }
        }
    }

    func updateAmounts(below limitCents: Int64, to cents: Int64) throws -> Int {
        let request = FetchRequest("Item", predicate: PropertyPath("amount") < StoredValue.decimal(Self.decimal(cents: limitCents)))
        return try store.write { tx in try tx.updateAll(request, set: ["amount": Self.decimal(cents: cents)]) }
    }

    func deleteItems(below limitCents: Int64) throws -> Int {
        let request = FetchRequest("Item", predicate: PropertyPath("amount") < StoredValue.decimal(Self.decimal(cents: limitCents)))
        return try store.write { tx in try tx.deleteAll(request) }
    }

    private static func decimal(cents: Int64) -> Decimal {
        Decimal(sign: .plus, exponent: -2, significand: Decimal(cents))
    }

    func digest() throws -> RecordsDigest {
        try store.read { r in
            var d = RecordsDigest()
            var names: [UInt64: StoredValue] = [:]
            for id in try r.objects("TodoList") {
                guard let v = try r.values(of: id) else { continue }
                d.lists += 1
                names[id.primaryKey] = v["name"]
                if case .int(let n)? = v["itemCount"] { d.itemCountSum += Int(n) }
                if case .decimal(let t)? = v["total"] { d.totalCents += NSDecimalNumber(decimal: t * 100).int64Value }
                if case .string(let name)? = v["name"], v["searchName"] == .string(TextFolding.canonical(name)) {
                    d.searchNamesRight += 1
                }
            }
            d.notes = try r.count("Note")
            if d.notes > 0 {
                for word in TextData.probeWords { d.notesFound += try r.search(TextSearch("Note", matching: word)).count }
            }
            for id in try r.objects("Item") {
                d.items += 1
                guard let list = try r.target(of: "list", of: id) else { continue }
                if let name = names[list.primaryKey], try r.value("listName", of: id) == name { d.copiesRight += 1 }
            }
            return d
        }
    }

    func close() throws { try store.close() }

    /// Reopens the closed store read-only with its stored model: `Store.check()` (pages,
    /// checksums, order) and `checkRecords()` (indexes, inverses, every derived value
    /// recomputed from scratch).
    static func checkStore(directory: String) -> StoreCheck? { checkStrataStore(path: directory + "/" + fileName) }
}
