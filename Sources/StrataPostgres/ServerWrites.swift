import StrataRecords

/// What a pull took from PostgreSQL into the store, as its claim's changes name it: the
/// columns the server wrote per row, the rows it inserted, the links it made or broke.
///
/// The store transaction that applies a pull holds the server's values and what the store
/// computed from them (derived values, defaults, delete rules, inverses). Its push carries only
/// the second part: PostgreSQL already holds the first — or, if the server wrote again after
/// the pull read it, something newer, which writing the pull's values back would undo.
struct ServerWrites {
    /// Per row, the columns the server wrote (every one, for a row it inserted).
    var columns: [ObjectID: Set<String>] = [:]
    /// Rows the server inserted, now under store keys: PostgreSQL holds them (unless the
    /// server deleted them since), so their push is an update that fills only empty columns.
    var inserted: Set<ObjectID> = []
    /// Links made or broken, by join table index: (source, target).
    var links: Set<[Int64]> = []
    /// Rows whose derived columns the server wrote over: the store's values go back.
    var derivedRewrites: [ObjectID] = []

    /// The writes a claim's changes describe (their keys as the keying step left them).
    init(_ changes: [PostgresReplicator.PulledChange], schema: ReplicationSchema) {
        var rewritten = Set<ObjectID>()
        for change in changes {
            if let join = schema.joinTableByName[change.table] {
                if let other = change.other { links.insert([Int64(join), change.pk, other]) }
                continue
            }
            guard let index = schema.tableByEntity[change.table] else { continue }
            let table = schema.tables[index]
            let id = ObjectID(entity: change.table, primaryKey: UInt64(bitPattern: change.pk))
            switch change.op {
            case "keyed":
                inserted.insert(id)
                columns[id, default: []].formUnion(table.columns.map(\.name))
            case "insert":
                // A key the store already held (applied as an update of every column), or, with
                // several stores, a row another store or the server inserted under its own key:
                // if the store inserted it, its push only fills what PostgreSQL holds as NULL.
                inserted.insert(id)
                columns[id, default: []].formUnion(table.columns.map(\.name))
            case "update":
                let written = change.columns ?? []
                columns[id, default: []].formUnion(written)
                // Derived values another store wrote are its own computation of them (equal
                // once the rows are, or its own clock's `now()`): only a server application's
                // writes to them are replaced, or two stores would rewrite each other's forever.
                if change.origin == nil,
                   written.contains(where: { table.columnByName[$0].map { table.columns[$0].isDerived } ?? false }),
                   rewritten.insert(id).inserted {
                    derivedRewrites.append(id)
                }
            default:
                break
            }
        }
    }

    /// Whether the server wrote `column` of `id`.
    func wrote(_ column: String, of id: ObjectID) -> Bool {
        columns[id]?.contains(column) ?? false
    }
}
