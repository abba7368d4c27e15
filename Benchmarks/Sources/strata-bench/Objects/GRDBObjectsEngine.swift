import Foundation
import GRDB

/// A list as a GRDB user declares it: a `Codable` struct, persisted by its table, with an
/// association to its items.
struct GRDBList: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "todoList"
    static let items = hasMany(GRDBItem.self)

    var id: Int64?
    var name: String

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// An item as a GRDB user declares it (`listId` is the foreign key `belongsTo` creates).
struct GRDBItem: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "item"
    static let list = belongsTo(GRDBList.self)

    var id: Int64?
    var listId: Int64?
    var title: String
    var sku: String
    var amount: Int64
    var done: Bool

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// GRDB 7 as its documentation recommends for an app: a `DatabasePool` (WAL), the schema made
/// by a `DatabaseMigrator`, records as `Codable` structs, the to-many read through the
/// association (`list.request(for: GRDBList.items)`), queries with the query interface.
/// `synchronous=NORMAL` and a 256 MiB page cache, as `records` configures SQLite, so its
/// durability is Strata's `.normal`. Merge: the second view re-fetches the changed rows by
/// primary key (what a GRDB app does without `ValueObservation`).
final class GRDBObjectsEngine: ObjectsEngine {
    static let fileName = "objects.sqlite"
    static var configuration: String {
        "grdb: GRDB 7 DatabasePool (WAL), synchronous=NORMAL, cache 256 MiB, Codable FetchableRecord/"
            + "MutablePersistableRecord structs, hasMany/belongsTo, sku indexed; update(db, columns:), "
            + "merge = re-fetch the changed rows by key"
    }

    private let pool: DatabasePool
    private let data: ObjectsData
    /// Ids of the lists inserted so far, by list index.
    private var listIDs: [Int: Int64] = [:]
    private var loaded: [GRDBItem] = []
    private var cache: [Int64: GRDBItem] = [:]
    private var changedIDs: [Int64] = []

    private init(pool: DatabasePool, data: ObjectsData) {
        self.pool = pool
        self.data = data
    }

    static func open(directory: String, data: ObjectsData, name: ObjectsEngineName) throws -> GRDBObjectsEngine {
        GRDBObjectsEngine(pool: try openPool(path: directory + "/" + fileName), data: data)
    }

    /// The database both GRDB engines use (`grdb` and `grdb-rows`): one configuration and one
    /// schema, so the two differ only in how records are read and written.
    static func openPool(path: String) throws -> DatabasePool {
        var config = Configuration()
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -262144")
        }
        let pool = try DatabasePool(path: path, configuration: config)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "todoList") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("name", .text).notNull()
            }
            try db.create(table: "item") { t in
                t.autoIncrementedPrimaryKey("id")
                t.belongsTo("list", inTable: "todoList", onDelete: .cascade)
                t.column("title", .text).notNull()
                t.column("sku", .text).notNull().indexed()
                t.column("amount", .integer).notNull()
                t.column("done", .boolean).notNull()
            }
        }
        try migrator.migrate(pool)
        return pool
    }

    func insert(lists: Range<Int>, items: Range<Int>) throws {
        let data = self.data
        let known = listIDs
        let made = try pool.write { db -> [Int: Int64] in
            var made: [Int: Int64] = [:]
            for i in lists {
                var list = GRDBList(id: nil, name: data.listName(i))
                try list.insert(db)
                made[i] = list.id
            }
            for j in items {
                let l = data.list(ofItem: j)
                var item = GRDBItem(id: nil, listId: made[l] ?? known[l], title: data.title(j), sku: data.sku(j),
                                    amount: data.amount(j), done: data.done(j))
                try item.insert(db)
                guard item.id == Int64(j + 1) else { throw BenchError("grdb: item \(j) got id \(item.id ?? 0)") }
            }
            return made
        }
        listIDs.merge(made) { a, _ in a }
    }

    func fetchAll() throws -> ObjectsDigest {
        let items = try pool.read { db in try GRDBItem.fetchAll(db) }
        var d = ObjectsDigest()
        for item in items { d.add(title: item.title, amount: item.amount, done: item.done) }
        return d
    }

    func fetchBySKU(_ skus: ArraySlice<String>) throws -> ObjectsDigest {
        try pool.read { db in
            var d = ObjectsDigest()
            for s in skus {
                for item in try GRDBItem.filter(Column("sku") == s).fetchAll(db) { d.add(title: item.title) }
            }
            return d
        }
    }

    func traverse(list i: Int) throws -> ObjectsDigest {
        try pool.read { db in
            var d = ObjectsDigest()
            guard let list = try GRDBList.fetchOne(db, key: Int64(i + 1)) else { throw BenchError("grdb: no list \(i)") }
            for item in try list.request(for: GRDBList.items).fetchAll(db) { d.add(amount: item.amount) }
            return d
        }
    }

    func loadForUpdate(_ items: [Int]) throws {
        loaded = try pool.read { db in try GRDBItem.fetchAll(db, keys: items.map { Int64($0 + 1) }) }
        guard loaded.count == items.count else { throw BenchError("grdb: loaded \(loaded.count) of \(items.count) items") }
    }

    func updateLoaded() throws {
        let data = self.data
        var items = loaded
        try pool.write { db in
            for k in items.indices {
                items[k].amount = data.changedAmount(Int(items[k].id! - 1))
                try items[k].update(db, columns: ["amount"])
            }
        }
        loaded = items
    }

    func prepareMerge(_ items: [Int]) throws {
        let keys = items.map { Int64($0 + 1) }
        let rows = try pool.read { db in try GRDBItem.fetchAll(db, keys: keys) }
        cache = Dictionary(uniqueKeysWithValues: rows.map { ($0.id!, $0) })
        loaded = rows
        try updateLoaded()
        changedIDs = keys
    }

    func merge() throws -> ObjectsDigest {
        let keys = changedIDs
        for item in try pool.read({ db in try GRDBItem.fetchAll(db, keys: keys) }) { cache[item.id!] = item }
        var d = ObjectsDigest()
        for item in cache.values { d.add(amount: item.amount) }
        return d
    }

    func digest() throws -> ObjectsDigest {
        try pool.read { db in
            var d = ObjectsDigest()
            for item in try GRDBItem.fetchAll(db) {
                d.add(title: item.title, amount: item.amount, done: item.done, list: item.listId.map { $0 - 1 })
            }
            d.lists = try GRDBList.fetchCount(db)
            return d
        }
    }

    func close() throws { try pool.close() }

    static func checkStore(directory: String) -> StoreCheck? { nil }
}
