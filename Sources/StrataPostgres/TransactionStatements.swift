import PostgresNIO
import StrataRecords

/// The statements that apply one Strata history transaction to the replicated tables: one
/// multi-row upsert per entity and set of columns, the links and unlinks of each join table,
/// one delete per entity. The foreign keys are checked at commit (deferred), so their order
/// within the transaction does not matter.
struct TransactionStatements {
    /// At most this many parameters in one statement (PostgreSQL allows 65,535).
    static let parameterLimit = 30_000

    var queries: [PostgresQuery] = []
    /// Rows the statements write, delete, link or unlink.
    var rows = 0

    init(_ transaction: HistoryTransaction, schema: ReplicationSchema) throws {
        var upserts: [UpsertKey: [HistoryChange]] = [:]
        var upsertOrder: [UpsertKey] = []
        var deletes: [Int: [Int64]] = [:]
        var links: [Int: [(Int64, Int64)]] = [:]
        var unlinks: [Int: [(Int64, Int64)]] = [:]
        var seenLinks = Set<LinkKey>()
        for change in transaction.changes {
            guard let tableIndex = schema.tableByEntity[change.id.entity] else { continue }
            let table = schema.tables[tableIndex]
            let pk = Int64(bitPattern: change.id.primaryKey)
            switch change.kind {
            case .insert, .update:
                let columns = (Array(change.values.keys) + Array(change.toOneTargets.keys))
                    .filter { table.columnByName[$0] != nil && $0 != "pk" }.sorted()
                let key = UpsertKey(table: tableIndex, columns: columns)
                if upserts[key] == nil { upsertOrder.append(key) }
                upserts[key, default: []].append(change)
            case .delete:
                deletes[tableIndex, default: []].append(pk)
            case .link, .unlink:
                guard let relationship = change.relationship, let other = change.other,
                      let side = schema.joinBySide["\(change.id.entity).\(relationship)"] else { continue }
                let otherKey = Int64(bitPattern: other.primaryKey)
                let pair = side.isSource ? (pk, otherKey) : (otherKey, pk)
                // Each link is listed once from each side.
                guard seenLinks.insert(LinkKey(table: side.table, source: pair.0, target: pair.1,
                                               added: change.kind == .link)).inserted else { continue }
                if change.kind == .link { links[side.table, default: []].append(pair) } else {
                    unlinks[side.table, default: []].append(pair)
                }
            }
        }
        for key in upsertOrder { try appendUpserts(upserts[key]!, key: key, schema: schema) }
        for (table, pairs) in links.sorted(by: { $0.key < $1.key }) {
            appendLinks(pairs, table: schema.joinTables[table].name, adding: true)
        }
        for (table, pairs) in unlinks.sorted(by: { $0.key < $1.key }) {
            appendLinks(pairs, table: schema.joinTables[table].name, adding: false)
        }
        for (table, keys) in deletes.sorted(by: { $0.key < $1.key }) {
            var bindings = PostgresBindings()
            bindings.append(keys)
            queries.append(PostgresQuery(
                unsafeSQL: "DELETE FROM \(SQL.name(schema.tables[table].entity)) WHERE pk = ANY($1::bigint[])",
                binds: bindings))
            rows += keys.count
        }
    }

    private struct UpsertKey: Hashable {
        var table: Int
        var columns: [String]
    }

    private struct LinkKey: Hashable {
        var table: Int
        var source: Int64
        var target: Int64
        var added: Bool
    }

    /// `INSERT … ON CONFLICT (pk) DO UPDATE` of the listed columns, in statements of at most
    /// ``parameterLimit`` parameters.
    private mutating func appendUpserts(_ changes: [HistoryChange], key: UpsertKey, schema: ReplicationSchema) throws {
        let table = schema.tables[key.table]
        let columns = ["pk"] + key.columns
        let types = columns.map { table.columns[table.columnByName[$0]!].sqlType }
        let columnList = columns.map(SQL.name).joined(separator: ", ")
        let conflict = key.columns.isEmpty ? "DO NOTHING"
            : "DO UPDATE SET " + key.columns.map { "\(SQL.name($0)) = EXCLUDED.\(SQL.name($0))" }.joined(separator: ", ")
        let perStatement = max(1, Self.parameterLimit / columns.count)
        var start = 0
        while start < changes.count {
            let slice = changes[start..<min(start + perStatement, changes.count)]
            start += perStatement
            var bindings = PostgresBindings(capacity: slice.count * columns.count)
            var tuples: [String] = []
            tuples.reserveCapacity(slice.count)
            var parameter = 1
            for change in slice {
                var placeholders: [String] = []
                for (column, type) in zip(columns, types) {
                    if column == "pk" {
                        bindings.append(Int64(bitPattern: change.id.primaryKey))
                    } else if let value = change.values[column] {
                        try bindings.append(stored: value)
                    } else if let target = change.toOneTargets[column] {
                        if let target { bindings.append(Int64(bitPattern: target.primaryKey)) } else { bindings.appendNull() }
                    } else {
                        bindings.appendNull()
                    }
                    placeholders.append("$\(parameter)::\(type)")
                    parameter += 1
                }
                tuples.append("(" + placeholders.joined(separator: ", ") + ")")
            }
            queries.append(PostgresQuery(
                unsafeSQL: "INSERT INTO \(SQL.name(table.entity)) (\(columnList)) VALUES "
                    + tuples.joined(separator: ", ") + " ON CONFLICT (pk) \(conflict)",
                binds: bindings))
            rows += slice.count
        }
    }

    private mutating func appendLinks(_ pairs: [(Int64, Int64)], table: String, adding: Bool) {
        var bindings = PostgresBindings()
        bindings.append(pairs.map(\.0))
        bindings.append(pairs.map(\.1))
        let rows = "SELECT * FROM unnest($1::bigint[], $2::bigint[])"
        queries.append(PostgresQuery(
            unsafeSQL: adding
                ? "INSERT INTO \(SQL.name(table)) (source, target) \(rows) ON CONFLICT DO NOTHING"
                : "DELETE FROM \(SQL.name(table)) WHERE (source, target) IN (\(rows))",
            binds: bindings))
        self.rows += pairs.count
    }
}
