import Foundation
import StrataRecords
import StrataStorage

/// The record layer alone on the objects benchmark's model, built with `Entity`, used at its
/// fastest public paths (the peer at its best, as `grdb-rows` is GRDB): rows written through
/// prepared writes (`prepareWrite`, values in a fixed order, no dictionary per row), read in the
/// scan (`fetchPrimaryKeysAndRows`) or with `storedRow(of:)`, field positions looked up once, so
/// the difference is what objects cost.
final class RecordLayerObjectsEngine: ObjectsEngine {
    static let fileName = "records.strata"
    static var configuration: String {
        "records: Strata RecordStore, the same model with Entity (TodoList.items ↔ Item.list, Item.sku FetchIndex), "
            + "durability .normal; rows written with prepared writes, read in the scan or with storedRow(of:); "
            + "merge = a row cache updated from RecordChanges"
    }

    static func model() throws -> Model {
        try Model {
            Entity("TodoList") {
                AttributeDescription("name", .string)
                RelationshipDescription("items", toMany: "Item", inverse: "list", deleteRule: .cascade)
            }
            Entity("Item") {
                AttributeDescription("title", .string)
                AttributeDescription("sku", .string)
                AttributeDescription("amount", .int64, default: Int64(0))
                AttributeDescription("done", .bool, default: false)
                RelationshipDescription("list", toOne: "TodoList", inverse: "items")
                FetchIndex("sku")
            }
        }
    }

    private let store: RecordStore
    private let data: ObjectsData
    /// Row positions of Item's fields.
    private let title, amount, done, list: Int
    private var toUpdate: [(ObjectID, Int)] = []
    /// The merge's second view: rows by primary key, and the change set of the first view's save.
    private var cache: [UInt64: [StoredValue]] = [:]
    private var changes: RecordChanges?
    /// Prepared writes: a list's name; an item's five properties; an item's amount.
    private let newList, newItem, setAmount: PreparedWrite

    private init(store: RecordStore, data: ObjectsData) throws {
        self.store = store
        self.data = data
        newList = try store.prepareWrite("TodoList", properties: ["name"])
        newItem = try store.prepareWrite("Item", properties: ["title", "sku", "amount", "done", "list"])
        setAmount = try store.prepareWrite("Item", properties: ["amount"])
        guard let item = store.model.entity("Item"), let title = item.rowFieldIndex(of: "title"),
              let amount = item.rowFieldIndex(of: "amount"), let done = item.rowFieldIndex(of: "done"),
              let list = item.rowFieldIndex(of: "list") else { throw BenchError("records: Item's fields not found") }
        (self.title, self.amount, self.done, self.list) = (title, amount, done, list)
    }

    static func open(directory: String, data: ObjectsData, name: ObjectsEngineName) throws -> RecordLayerObjectsEngine {
        try RecordLayerObjectsEngine(store: try RecordStore(path: directory + "/" + fileName, model: try model(),
                                                            options: StoreOptions(durability: .normal)), data: data)
    }

    private static func item(_ j: Int) -> ObjectID { ObjectID(entity: "Item", primaryKey: UInt64(j + 1)) }
    private static func list(_ i: Int) -> ObjectID { ObjectID(entity: "TodoList", primaryKey: UInt64(i + 1)) }

    func insert(lists: Range<Int>, items: Range<Int>) throws {
        try store.write { tx in
            for i in lists {
                let id = try tx.insert(newList, [.string(data.listName(i))])
                guard id == Self.list(i) else { throw BenchError("records: list \(i) got \(id)") }
            }
            for j in items {
                let id = try tx.insert(newItem, [.string(data.title(j)), .string(data.sku(j)), .int(data.amount(j)),
                                                 .bool(data.done(j)), Self.list(data.list(ofItem: j)).strataValue])
                guard id == Self.item(j) else { throw BenchError("records: item \(j) got \(id)") }
            }
        }
    }

    @inline(__always)
    private func string(_ v: StoredValue) -> String { if case .string(let s) = v { return s }; return "" }
    @inline(__always)
    private func int(_ v: StoredValue) -> Int64 { if case .int(let i) = v { return i }; return 0 }
    @inline(__always)
    private func bool(_ v: StoredValue) -> Bool { if case .bool(let b) = v { return b }; return false }

    func fetchAll() throws -> ObjectsDigest {
        // The record layer at its best for "every row": one scan that returns the rows it read
        // (a baseline is the peer on its fast path, not fetch + a descent per id; decision 49).
        try store.read { r in
            var d = ObjectsDigest()
            for row in try r.fetchPrimaryKeysAndRows(FetchRequest("Item")).rows {
                d.add(title: string(row[title]), amount: int(row[amount]), done: bool(row[done]))
            }
            return d
        }
    }

    func fetchBySKU(_ skus: ArraySlice<String>) throws -> ObjectsDigest {
        try store.read { r in
            var d = ObjectsDigest()
            for s in skus {
                for id in try r.fetch(FetchRequest("Item", predicate: PropertyPath("sku") == s)) {
                    guard let row = try r.storedRow(of: id) else { continue }
                    d.add(title: string(row[title]))
                }
            }
            return d
        }
    }

    func traverse(list i: Int) throws -> ObjectsDigest {
        try store.read { r in
            var d = ObjectsDigest()
            for id in try r.members(of: "items", of: Self.list(i)) {
                guard let row = try r.storedRow(of: id) else { continue }
                d.add(amount: int(row[amount]))
            }
            return d
        }
    }

    func loadForUpdate(_ items: [Int]) throws {
        // A record-layer user holds identifiers; there is nothing else to load.
        toUpdate = items.map { (Self.item($0), $0) }
    }

    func updateLoaded() throws {
        try store.write { tx in
            for (id, j) in toUpdate { try tx.update(id, setAmount, [.int(data.changedAmount(j))]) }
        }
    }

    func prepareMerge(_ items: [Int]) throws {
        cache = try store.read { r in
            var rows: [UInt64: [StoredValue]] = [:]
            for j in items { rows[Self.item(j).primaryKey] = try r.storedRow(of: Self.item(j)) }
            return rows
        }
        changes = try store.writeReportingChanges { tx in
            for j in items { try tx.update(Self.item(j), setAmount, [.int(data.changedAmount(j))]) }
        }.changes
    }

    func merge() throws -> ObjectsDigest {
        guard let changes else { throw BenchError("records: merge not prepared") }
        for row in changes.updated where cache[row.id.primaryKey] != nil {
            if let values = row.values { cache[row.id.primaryKey] = values }
        }
        var d = ObjectsDigest()
        for row in cache.values { d.add(amount: int(row[amount])) }
        return d
    }

    func digest() throws -> ObjectsDigest {
        try store.read { r in
            var d = ObjectsDigest()
            for id in try r.objects("Item") {
                guard let row = try r.storedRow(of: id) else { continue }
                let l: Int64? = if case .int(let pk) = row[list] { pk - 1 } else { nil }
                d.add(title: string(row[title]), amount: int(row[amount]), done: bool(row[done]), list: l)
            }
            d.lists = try r.count("TodoList")
            return d
        }
    }

    func close() throws { try store.close() }

    static func checkStore(directory: String) -> StoreCheck? { checkStrataStore(path: directory + "/" + fileName) }
}
