import Foundation
import GRDB

/// A list as a performance-minded GRDB user declares it: no `Codable`, a hand-written
/// `init(row:)` and `encode(to:)`.
struct GRDBRowsList: FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "todoList"

    var id: Int64?
    var name: String

    init(id: Int64?, name: String) {
        self.id = id
        self.name = name
    }

    /// The column order `init(row:)` reads by index: the query interface selects these, and
    /// every hand-written statement below names the same columns in the same order.
    static var databaseSelection: [any SQLSelectable] { [Column("id"), Column("name")] }

    init(row: Row) throws {
        // By index, as GRDB's README advises "for high performance": no column-name lookup
        // per value, and `Int64`/`String` take the `StatementColumnConvertible` fast path,
        // reading straight from the SQLite statement.
        id = row[0]
        name = row[1]
    }

    func encode(to container: inout PersistenceContainer) {
        container["id"] = id
        container["name"] = name
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// An item as a performance-minded GRDB user declares it (`listId` is the foreign key of
/// `belongsTo`, as in ``GRDBItem``).
struct GRDBRowsItem: FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "item"

    var id: Int64?
    var listId: Int64?
    var title: String
    var sku: String
    var amount: Int64
    var done: Bool

    init(id: Int64?, listId: Int64?, title: String, sku: String, amount: Int64, done: Bool) {
        self.id = id
        self.listId = listId
        self.title = title
        self.sku = sku
        self.amount = amount
        self.done = done
    }

    /// The column order `init(row:)` reads by index (see ``GRDBRowsList/databaseSelection``).
    static var databaseSelection: [any SQLSelectable] {
        [Column("id"), Column("listId"), Column("title"), Column("sku"), Column("amount"), Column("done")]
    }

    /// The same columns for the hand-written statements.
    static let columns = "id, listId, title, sku, amount, done"

    init(row: Row) throws {
        id = row[0]
        listId = row[1]
        title = row[2]
        sku = row[3]
        amount = row[4]
        done = row[5]
    }

    /// What `insert(db)` and `update(db)` write; the benchmark's repeated writes of items go
    /// through cached statements instead (see ``GRDBRowsObjectsEngine/insert(lists:items:)``).
    func encode(to container: inout PersistenceContainer) {
        container["id"] = id
        container["listId"] = listId
        container["title"] = title
        container["sku"] = sku
        container["amount"] = amount
        container["done"] = done
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// GRDB 7 at its best, as its documentation advises a user who cares about speed: the same
/// database as ``GRDBObjectsEngine`` (one ``GRDBObjectsEngine/openPool(path:)``: `DatabasePool`,
/// WAL, `synchronous=NORMAL`, 256 MiB cache, the same schema and indexes), records with a
/// hand-written `init(row:)` reading columns by index and a hand-written `encode(to:)`, and
/// every statement the workload repeats prepared once per connection with
/// `db.cachedStatement(sql:)`, its arguments bound with `setUncheckedArguments` (GRDB:
/// "trades safety for performance"; the benchmark's digests check every answer instead).
///
/// The lists (ten rows) are inserted with `insert(db)` and the hand-written `encode(to:)`; the
/// items through a cached INSERT (see ``insert(lists:items:)``). Records are still fetched
/// into arrays (`fetchAll`), as the object layer's fetches return arrays of objects: a cursor
/// that kept nothing would measure less work than the other engines do.
final class GRDBRowsObjectsEngine: ObjectsEngine {
    static var configuration: String {
        "grdb-rows: GRDB 7 as grdb (the same DatabasePool, pragmas and schema); hand-written init(row:) by column "
            + "index and encode(to:); cached statements (db.cachedStatement(sql:), setUncheckedArguments) for the "
            + "item inserts, the sku lookup, the list and its items, the update; merge = re-fetch the changed rows by key"
    }

    /// The statements the workloads repeat, one string each (the statement cache's key).
    private enum SQL {
        static let allItems = "SELECT \(GRDBRowsItem.columns) FROM item"
        static let itemBySKU = "SELECT \(GRDBRowsItem.columns) FROM item WHERE sku = ?"
        static let listByID = "SELECT id, name FROM todoList WHERE id = ?"
        static let itemsOfList = "SELECT \(GRDBRowsItem.columns) FROM item WHERE listId = ?"
        static let updateAmount = "UPDATE item SET amount = ? WHERE id = ?"
        static let insertItem = "INSERT INTO item (listId, title, sku, amount, done) VALUES (?, ?, ?, ?, ?)"
    }

    private let pool: DatabasePool
    private let data: ObjectsData
    /// Ids of the lists inserted so far, by list index.
    private var listIDs: [Int: Int64] = [:]
    private var loaded: [GRDBRowsItem] = []
    private var cache: [Int64: GRDBRowsItem] = [:]
    private var changedIDs: [Int64] = []

    private init(pool: DatabasePool, data: ObjectsData) {
        self.pool = pool
        self.data = data
    }

    static func open(directory: String, data: ObjectsData, name: ObjectsEngineName) throws -> GRDBRowsObjectsEngine {
        GRDBRowsObjectsEngine(pool: try GRDBObjectsEngine.openPool(path: directory + "/" + GRDBObjectsEngine.fileName), data: data)
    }

    func insert(lists: Range<Int>, items: Range<Int>) throws {
        let data = self.data
        let known = listIDs
        let made = try pool.write { db -> [Int: Int64] in
            var made: [Int: Int64] = [:]
            for i in lists {
                var list = GRDBRowsList(id: nil, name: data.listName(i))
                try list.insert(db)
                made[i] = list.id
            }
            // The items, the statement this workload repeats 100,000 times, through one cached
            // INSERT, as GRDB's `cachedStatement(sql:)` documentation shows: `insert(db)` builds
            // a persistence container (case-insensitive column keys) and hashes its INSERT query
            // to find its cached statement for every record, which the profile showed costing
            // several times SQLite's own work (decision 46).
            let statement = try db.cachedStatement(sql: SQL.insertItem)
            for j in items {
                let l = data.list(ofItem: j)
                statement.setUncheckedArguments([made[l] ?? known[l], data.title(j), data.sku(j), data.amount(j), data.done(j)])
                try statement.execute()
                guard db.lastInsertedRowID == Int64(j + 1) else {
                    throw BenchError("grdb-rows: item \(j) got id \(db.lastInsertedRowID)")
                }
            }
            return made
        }
        listIDs.merge(made) { a, _ in a }
    }

    func fetchAll() throws -> ObjectsDigest {
        let items = try pool.read { db in try GRDBRowsItem.fetchAll(db.cachedStatement(sql: SQL.allItems)) }
        var d = ObjectsDigest()
        for item in items { d.add(title: item.title, amount: item.amount, done: item.done) }
        return d
    }

    func fetchBySKU(_ skus: ArraySlice<String>) throws -> ObjectsDigest {
        try pool.read { db in
            var d = ObjectsDigest()
            let statement = try db.cachedStatement(sql: SQL.itemBySKU)
            for s in skus {
                statement.setUncheckedArguments([s])
                for item in try GRDBRowsItem.fetchAll(statement) { d.add(title: item.title) }
            }
            return d
        }
    }

    func traverse(list i: Int) throws -> ObjectsDigest {
        try pool.read { db in
            var d = ObjectsDigest()
            let listStatement = try db.cachedStatement(sql: SQL.listByID)
            listStatement.setUncheckedArguments([Int64(i + 1)])
            guard let list = try GRDBRowsList.fetchOne(listStatement), let id = list.id else {
                throw BenchError("grdb-rows: no list \(i)")
            }
            let items = try db.cachedStatement(sql: SQL.itemsOfList)
            items.setUncheckedArguments([id])
            for item in try GRDBRowsItem.fetchAll(items) { d.add(amount: item.amount) }
            return d
        }
    }

    func loadForUpdate(_ items: [Int]) throws {
        loaded = try pool.read { db in try GRDBRowsItem.fetchAll(db, keys: items.map { Int64($0 + 1) }) }
        guard loaded.count == items.count else { throw BenchError("grdb-rows: loaded \(loaded.count) of \(items.count) items") }
    }

    func updateLoaded() throws {
        let data = self.data
        var items = loaded
        try pool.write { db in
            // One prepared UPDATE of the changed column, where `update(db, columns:)` builds
            // a persistence container of every column and looks its statement up per record.
            let statement = try db.cachedStatement(sql: SQL.updateAmount)
            for k in items.indices {
                guard let id = items[k].id else { throw BenchError("grdb-rows: a loaded item has no id") }
                items[k].amount = data.changedAmount(Int(id - 1))
                statement.setUncheckedArguments([items[k].amount, id])
                try statement.execute()
                guard db.changesCount == 1 else { throw BenchError("grdb-rows: no item \(id) to update") }
            }
        }
        loaded = items
    }

    func prepareMerge(_ items: [Int]) throws {
        let keys = items.map { Int64($0 + 1) }
        let rows = try pool.read { db in try GRDBRowsItem.fetchAll(db, keys: keys) }
        cache = Dictionary(uniqueKeysWithValues: rows.map { ($0.id!, $0) })
        loaded = rows
        try updateLoaded()
        changedIDs = keys
    }

    func merge() throws -> ObjectsDigest {
        // One `id IN (…)` query for the whole save (prepared once per merge, so nothing to
        // cache), decoded by `init(row:)` through `databaseSelection`.
        let keys = changedIDs
        for item in try pool.read({ db in try GRDBRowsItem.fetchAll(db, keys: keys) }) { cache[item.id!] = item }
        var d = ObjectsDigest()
        for item in cache.values { d.add(amount: item.amount) }
        return d
    }

    func digest() throws -> ObjectsDigest {
        try pool.read { db in
            var d = ObjectsDigest()
            let items = try GRDBRowsItem.fetchCursor(db.cachedStatement(sql: SQL.allItems))
            while let item = try items.next() {
                d.add(title: item.title, amount: item.amount, done: item.done, list: item.listId.map { $0 - 1 })
            }
            d.lists = try GRDBRowsList.fetchCount(db)
            return d
        }
    }

    func close() throws { try pool.close() }

    static func checkStore(directory: String) -> StoreCheck? { nil }
}
