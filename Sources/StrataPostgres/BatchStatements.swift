import StrataRecords

/// The statements that apply a run of consecutive Strata history transactions to the
/// replicated tables as one PostgreSQL transaction: the run's net effect on each row (its last
/// values, or its deletion) rather than every step, so a thousand small transactions cost a few
/// statements, not thousands of round trips. In order: the deletes of each entity, one multi-row
/// upsert per entity and set of columns, the unlinks and then the links of each join table. The
/// foreign keys are checked at commit (deferred), so the order of tables does not matter; within
/// the run a row deleted and then inserted again is deleted before it is upserted.
///
/// Several stores push into one dataset at once, and their batches often write the same rows (a
/// list's derived columns, recomputed by each store that pulled a change to its items). Two
/// batches that lock shared rows in different orders deadlock, and PostgreSQL finds that only
/// after `deadlock_timeout` (a second by default), so every batch first locks the rows it will
/// update or delete in one order — table by table, key by key — in the statement that opens it,
/// and writes nothing where PostgreSQL already holds the values (such a row is not locked by the
/// update at all). Statements and their rows also come in key order, so a batch is the same
/// text whatever order its changes came in (decision 113).
struct BatchStatements {
    /// At most this many parameters in one statement (PostgreSQL allows 65,535).
    static let parameterLimit = 30_000
    /// At most this many rows in one statement written with column arrays: a bound on one
    /// message's size, far above a batch's usual rows.
    static let rowsPerStatement = 20_000

    /// The value a column ends with: an attribute's value or a to-one's target key.
    private enum ColumnValue {
        case stored(StoredValue)
        case target(Int64?)
    }

    /// What the run did to one row.
    private struct RowState {
        /// Deleted at some point of the run (before the values below, if any).
        var deleted = false
        /// Inserted or updated after the last deletion, if any.
        var upserted = false
        /// Inserted after the last deletion, if any: written with an upsert. A row only updated
        /// is written with an `UPDATE`, which leaves out a row PostgreSQL no longer holds (a
        /// server application deleted it: a pull deletes it in the store) rather than insert
        /// the few columns the update names as a row.
        var inserted = false
        var values: [String: ColumnValue] = [:]
        /// Columns written only where PostgreSQL holds NULL: a pulled row's values the store
        /// filled in (defaults), which a server's later write must win over.
        var fills: Set<String> = []
    }

    private struct RowKey: Hashable {
        var table: Int
        var pk: Int64
    }

    private struct LinkKey: Hashable {
        var table: Int
        var source: Int64
        var target: Int64
    }

    private let schema: ReplicationSchema
    private var rowStates: [RowKey: RowState] = [:]
    /// Rows in the order the run first touched them (the statements' order is deterministic).
    private var rowOrder: [RowKey] = []
    /// Each pair's last state: linked (`true`) or unlinked.
    private var linkStates: [LinkKey: Bool] = [:]
    private var linkOrder: [LinkKey] = []
    /// Changes taken in (a bound on the batch's memory, read by the caller).
    private(set) var changeCount = 0

    /// Whether the statements guard against rows PostgreSQL no longer holds: a to-one's target
    /// or a link's end the server deleted meanwhile (the store learns of it at its next pull)
    /// is left out as PostgreSQL's `ON DELETE` would have left it, rather than failing the
    /// push on the foreign key. A push turns it on to retry a batch that failed so (it costs a
    /// statement per to-one column written); never for a copy, which inserts targets after
    /// what points at them.
    private let guardsMissingRows: Bool

    init(schema: ReplicationSchema, guardsMissingRows: Bool = false) {
        self.schema = schema
        self.guardsMissingRows = guardsMissingRows
    }

    /// Takes in one transaction's changes, after those taken before. `server`: the
    /// transaction applied a pull, which took these writes from PostgreSQL — they are left
    /// out, and only what the store computed from them goes (see ``ServerWrites``).
    mutating func add(_ changes: [HistoryChange], leavingOut server: ServerWrites? = nil) {
        for change in changes { add(change, leavingOut: server) }
    }

    private mutating func add(_ change: HistoryChange, leavingOut server: ServerWrites?) {
        guard let tableIndex = schema.tableByEntity[change.id.entity] else { return }
        changeCount += 1
        let pk = Int64(bitPattern: change.id.primaryKey)
        switch change.kind {
        case .insert, .update:
            let table = schema.tables[tableIndex]
            let key = RowKey(table: tableIndex, pk: pk)
            var state = rowStates[key] ?? { rowOrder.append(key); return RowState() }()
            state.upserted = true
            // A row the server inserted is in PostgreSQL already: updated, never inserted
            // again (the server may have deleted it since).
            let pulledInsert = change.kind == .insert && server?.inserted.contains(change.id) == true
            if change.kind == .insert && !pulledInsert { state.inserted = true }
            func set(_ column: String, _ value: ColumnValue, derived: Bool) {
                if pulledInsert && !derived {
                    state.values[column] = value
                    state.fills.insert(column)
                } else if derived || server?.wrote(column, of: change.id) != true {
                    state.values[column] = value
                    state.fills.remove(column)
                }
            }
            for (column, value) in change.values where column != "pk" && table.columnByName[column] != nil {
                set(column, .stored(value), derived: change.derivedNames.contains(column))
            }
            for (column, target) in change.toOneTargets where table.columnByName[column] != nil {
                set(column, .target(target.map { Int64(bitPattern: $0.primaryKey) }), derived: false)
            }
            if pulledInsert {
                // An insert lists the values that are not nil: a derived column the server
                // wrote and the store leaves nil is cleared.
                for column in table.columns where column.isDerived && change.values[column.name] == nil {
                    set(column.name, .stored(.null), derived: true)
                }
            }
            rowStates[key] = state
        case .delete:
            let key = RowKey(table: tableIndex, pk: pk)
            if rowStates[key] == nil { rowOrder.append(key) }
            rowStates[key] = RowState(deleted: true)
        case .link, .unlink:
            guard let relationship = change.relationship, let other = change.other,
                  let side = schema.joinBySide["\(change.id.entity).\(relationship)"] else { return }
            let otherKey = Int64(bitPattern: other.primaryKey)
            let pair = side.isSource ? (pk, otherKey) : (otherKey, pk)
            // Each link is listed from both sides; the last state of the pair is what counts.
            // A link the pull took from the server is PostgreSQL's already (or undone since).
            if server?.links.contains([Int64(side.table), pair.0, pair.1]) == true { return }
            let key = LinkKey(table: side.table, source: pair.0, target: pair.1)
            if linkStates.updateValue(change.kind == .link, forKey: key) == nil { linkOrder.append(key) }
        }
    }

    /// The statements, and the rows they write, delete, link or unlink.
    func statements() throws -> (queries: [PostgresQuery], rows: Int) {
        var queries: [PostgresQuery] = []
        var rows = 0
        // Rows that end the run deleted: what still points at them is dropped, as PostgreSQL's
        // ON DELETE rules would have dropped it had the steps been applied one by one.
        var gone = Set<RowKey>()
        var deletes: [Int: [Int64]] = [:]
        var upserts: [UpsertKey: [(pk: Int64, values: [String: ColumnValue])]] = [:]
        var upsertOrder: [UpsertKey] = []
        for key in rowOrder {
            let state = rowStates[key]!
            if state.deleted { deletes[key.table, default: []].append(key.pk) }
            if state.deleted && !state.upserted { gone.insert(key) }
        }
        // Rows an `UPDATE` writes (upserted, not inserted), locked first with the deleted ones.
        var updated: [Int: [Int64]] = [:]
        for key in rowOrder {
            let state = rowStates[key]!
            guard state.upserted else { continue }
            let upsertKey = UpsertKey(table: key.table, columns: state.values.keys.sorted(), fills: state.fills.sorted(),
                                      inserting: state.inserted)
            if upserts[upsertKey] == nil { upsertOrder.append(upsertKey) }
            upserts[upsertKey, default: []].append((key.pk, state.values))
            if !state.inserted { updated[key.table, default: []].append(key.pk) }
        }
        upsertOrder.sort()
        var prelude: [String] = []
        var lockBindings = PostgresBindings()
        // A batch's `UPDATE … FROM (VALUES …)` and unlinks (`IN (SELECT … unnest …)`) join a
        // few hundred rows with a whole table; knowing the exact row count, the planner picks
        // a hash join over a scan of the table, whose cost grows with the table (decision 63).
        // Without hash and merge joins it looks each row up by its key. For this transaction
        // only.
        if !updated.isEmpty || linkStates.values.contains(false) {
            prelude.append("set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)")
        }
        // The locks, in one order for every batch of every store: table by table, the rows
        // deleted and then those updated, each by key. A `SELECT`'s subqueries run in the order
        // they are written, and `ORDER BY … FOR UPDATE` locks rows as it returns them.
        var parameter = 0
        for table in Set(deletes.keys).union(updated.keys).sorted() {
            for (keys, mode) in [(deletes[table], "UPDATE"), (updated[table], "NO KEY UPDATE")] {
                guard let keys else { continue }
                lockBindings.append(keys.sorted())
                parameter += 1
                prelude.append("(SELECT count(*) FROM (SELECT 1 FROM \(SQL.name(schema.tables[table].entity)) "
                    + "WHERE pk = ANY($\(parameter)::bigint[]) ORDER BY pk FOR \(mode)) AS locked)")
            }
        }
        if !prelude.isEmpty {
            queries.append(PostgresQuery(unsafeSQL: "SELECT " + prelude.joined(separator: ", "), binds: lockBindings))
        }
        for (table, keys) in deletes.sorted(by: { $0.key < $1.key }) {
            var bindings = PostgresBindings()
            bindings.append(keys.sorted())
            queries.append(PostgresQuery(
                unsafeSQL: "DELETE FROM \(SQL.name(schema.tables[table].entity)) WHERE pk = ANY($1::bigint[])",
                binds: bindings))
            rows += keys.count
        }
        for key in upsertOrder {
            rows += try appendUpserts(upserts[key]!.sorted { $0.pk < $1.pk }, key: key, gone: gone, to: &queries)
        }
        if guardsMissingRows { queries += missingTargetQueries(upserts) }
        var links: [Int: [(Int64, Int64)]] = [:]
        var unlinks: [Int: [(Int64, Int64)]] = [:]
        for key in linkOrder {
            let join = schema.joinTables[key.table]
            if linkStates[key]! {
                // A link to a row the run deleted went with it (ON DELETE CASCADE).
                let source = RowKey(table: schema.tableByEntity[join.entity]!, pk: key.source)
                let target = RowKey(table: schema.tableByEntity[join.target]!, pk: key.target)
                guard !gone.contains(source), !gone.contains(target) else { continue }
                links[key.table, default: []].append((key.source, key.target))
            } else {
                unlinks[key.table, default: []].append((key.source, key.target))
            }
        }
        func inOrder(_ pairs: [(Int64, Int64)]) -> [(Int64, Int64)] { pairs.sorted { ($0.0, $0.1) < ($1.0, $1.1) } }
        for (table, pairs) in unlinks.sorted(by: { $0.key < $1.key }) {
            queries.append(linkQuery(inOrder(pairs), join: schema.joinTables[table], adding: false))
            rows += pairs.count
        }
        for (table, pairs) in links.sorted(by: { $0.key < $1.key }) {
            queries.append(linkQuery(inOrder(pairs), join: schema.joinTables[table], adding: true))
            rows += pairs.count
        }
        return (queries, rows)
    }

    private struct UpsertKey: Hashable, Comparable {
        var table: Int
        var columns: [String]
        /// Of `columns`, those written only where PostgreSQL holds NULL.
        var fills: [String]
        var inserting: Bool

        /// Table by table; in a table, updates before inserts, then by the columns written.
        static func < (a: UpsertKey, b: UpsertKey) -> Bool {
            if a.table != b.table { return a.table < b.table }
            if a.inserting != b.inserting { return !a.inserting }
            if a.columns != b.columns { return a.columns.lexicographicallyPrecedes(b.columns) }
            return a.fills.lexicographicallyPrecedes(b.fills)
        }
    }

    /// After the upserts, per to-one column they set: a target PostgreSQL no longer holds (a
    /// server application deleted it after the store's change, before this push) is cleared,
    /// as `ON DELETE SET NULL` would have cleared it, instead of failing the deferred foreign
    /// key at commit. The pull that takes the deletion applies the store's own delete rule.
    private func missingTargetQueries(_ upserts: [UpsertKey: [(pk: Int64, values: [String: ColumnValue])]])
        -> [PostgresQuery] {
        var keys: [Int: [String: [Int64]]] = [:]
        for (key, rows) in upserts {
            let table = schema.tables[key.table]
            for column in key.columns where table.columns[table.columnByName[column]!].target != nil {
                for row in rows {
                    if case .target(.some) = row.values[column] { keys[key.table, default: [:]][column, default: []].append(row.pk) }
                }
            }
        }
        var queries: [PostgresQuery] = []
        for (tableIndex, columns) in keys.sorted(by: { $0.key < $1.key }) {
            let table = schema.tables[tableIndex]
            for (column, pks) in columns.sorted(by: { $0.key < $1.key }) {
                let target = table.columns[table.columnByName[column]!].target!
                var bindings = PostgresBindings()
                bindings.append(pks)
                queries.append(PostgresQuery(
                    unsafeSQL: "UPDATE \(SQL.name(table.entity)) AS t SET \(SQL.name(column)) = NULL "
                        + "WHERE t.pk = ANY($1::bigint[]) AND t.\(SQL.name(column)) IS NOT NULL AND NOT EXISTS "
                        + "(SELECT 1 FROM \(SQL.name(target)) AS r WHERE r.pk = t.\(SQL.name(column)))",
                    binds: bindings))
            }
        }
        return queries
    }

    /// `INSERT … ON CONFLICT (pk) DO UPDATE` of the listed columns for inserted rows, `UPDATE …
    /// FROM (VALUES …)` for updated ones, in statements of at most ``parameterLimit``
    /// parameters. Returns the rows.
    private func appendUpserts(_ rows: [(pk: Int64, values: [String: ColumnValue])], key: UpsertKey,
                               gone: Set<RowKey>, to queries: inout [PostgresQuery]) throws -> Int {
        let table = schema.tables[key.table]
        let columns = ["pk"] + key.columns
        let targetTables = columns.map { table.columns[table.columnByName[$0]!].target.flatMap { schema.tableByEntity[$0] } }
        let types = columns.map { table.columns[table.columnByName[$0]!].sqlType }
        let columnList = columns.map(SQL.name).joined(separator: ", ")
        let fills = Set(key.fills)
        func assignment(_ column: String, from source: String) -> String {
            let name = SQL.name(column)
            return fills.contains(column) ? "\(name) = COALESCE(t.\(name), \(source).\(name))" : "\(name) = \(source).\(name)"
        }
        let conflict = key.columns.isEmpty ? "DO NOTHING"
            : "DO UPDATE SET " + key.columns.map { assignment($0, from: "EXCLUDED") }.joined(separator: ", ")
        if !key.inserting && key.columns.isEmpty { return 0 }
        // An update leaves a row whose columns already hold what it would write: not written,
        // so not locked, and no change recorded for other stores. Numbers compare as text: a
        // `numeric`'s scale (1.0 and 1.00) and a double's sign of zero count as a difference.
        func compared(_ column: String, _ expression: String) -> String {
            let type = table.columns[table.columnByName[column]!].sqlType
            return type == "numeric" || type == "double precision" ? "(\(expression))::text" : expression
        }
        let changes = "(" + key.columns.map { compared($0, "t.\(SQL.name($0))") }.joined(separator: ", ")
            + ") IS DISTINCT FROM (" + key.columns.map { column -> String in
                let name = SQL.name(column)
                return compared(column, fills.contains(column) ? "COALESCE(t.\(name), v.\(name))" : "v.\(name)")
            }.joined(separator: ", ") + ")"
        // One array a column (decision 114): the statement's text, its parse and its plan do not
        // grow with its rows. A statement holding a value of another type than its column (which
        // the array's element type could not hold) is written with a row of parameters each.
        let arrayKinds = columns.map { ColumnArray.Kind(sqlType: table.columns[table.columnByName[$0]!].sqlType) }
        var start = 0
        while start < rows.count {
            let slice = rows[start..<min(start + Self.rowsPerStatement, rows.count)]
            start += Self.rowsPerStatement
            var arrays = arrayKinds.map { ColumnArray(kind: $0, capacity: slice.count) }
            var held = true
            fill: for row in slice {
                for index in columns.indices {
                    let value = index == 0 ? .target(row.pk)
                        : columnValue(row.values[columns[index]], targetTable: targetTables[index], gone: gone)
                    switch value {
                    case .stored(let stored): held = arrays[index].append(stored)
                    case .target(let target): held = arrays[index].append(target.map(StoredValue.int) ?? .null)
                    }
                    if !held { break fill }
                }
            }
            if held {
                var bindings = PostgresBindings(capacity: columns.count)
                for array in arrays { bindings.append(array) }
                let source = "(SELECT " + columns.indices.map { index in
                    "u.\(SQL.name(columns[index]))\(arrayKinds[index].cast(to: types[index]))"
                }.joined(separator: ", ") + " FROM unnest(" + arrays.indices.map { "$\($0 + 1)::\(arrayKinds[$0].arrayType)" }
                    .joined(separator: ", ") + ") AS u (\(columnList))) AS v"
                queries.append(PostgresQuery(unsafeSQL: key.inserting
                    ? "INSERT INTO \(SQL.name(table.entity)) AS t (\(columnList)) SELECT * FROM \(source) ON CONFLICT (pk) \(conflict)"
                    : "UPDATE \(SQL.name(table.entity)) AS t SET " + key.columns.map { assignment($0, from: "v") }.joined(separator: ", ")
                        + " FROM \(source) WHERE t.pk = v.pk AND \(changes)",
                    binds: bindings))
                continue
            }
            let perStatement = max(1, Self.parameterLimit / columns.count)
            for from in stride(from: slice.startIndex, to: slice.endIndex, by: perStatement) {
                queries.append(valuesStatement(slice[from..<min(from + perStatement, slice.endIndex)], columns: columns,
                                               types: types, targetTables: targetTables, gone: gone, table: table, key: key,
                                               assignment: assignment, conflict: conflict, changes: changes))
            }
        }
        return rows.count
    }

    /// What a column of `value` holds: a to-one's target is NULL where the run deleted it, as
    /// `ON DELETE SET NULL` would have made it.
    private func columnValue(_ value: ColumnValue?, targetTable: Int?, gone: Set<RowKey>) -> ColumnValue {
        switch value {
        case .stored(let stored): return .stored(stored)
        case .target(let target?):
            if let targetTable, gone.contains(RowKey(table: targetTable, pk: target)) { return .target(nil) }
            return .target(target)
        case .target(nil), nil: return .target(nil)
        }
    }

    /// The statement for rows some value of which its column's array could not hold: a row of
    /// parameters each, every parameter cast to its column's type.
    private func valuesStatement(_ rows: ArraySlice<(pk: Int64, values: [String: ColumnValue])>, columns: [String],
                                 types: [String], targetTables: [Int?], gone: Set<RowKey>, table: ReplicationSchema.Table,
                                 key: UpsertKey, assignment: (String, String) -> String, conflict: String,
                                 changes: String) -> PostgresQuery {
        let columnList = columns.map(SQL.name).joined(separator: ", ")
        var bindings = PostgresBindings(capacity: rows.count * columns.count)
        var sql = key.inserting ? "INSERT INTO \(SQL.name(table.entity)) AS t (\(columnList)) VALUES "
            : "UPDATE \(SQL.name(table.entity)) AS t SET " + key.columns.map { assignment($0, "v") }.joined(separator: ", ")
                + " FROM (VALUES "
        var parameter = 1
        for (rowIndex, row) in rows.enumerated() {
            sql += rowIndex == 0 ? "(" : ", ("
            for (index, column) in columns.enumerated() {
                switch index == 0 ? .target(row.pk) : columnValue(row.values[column], targetTable: targetTables[index], gone: gone) {
                case .stored(let value): bindings.append(stored: value)
                case .target(let target?): bindings.append(target)
                case .target(nil): bindings.appendNull()
                }
                sql += index == 0 ? "$\(parameter)::\(types[index])" : ", $\(parameter)::\(types[index])"
                parameter += 1
            }
            sql += ")"
        }
        sql += key.inserting ? " ON CONFLICT (pk) \(conflict)" : ") AS v (\(columnList)) WHERE t.pk = v.pk AND \(changes)"
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
    }

    private func linkQuery(_ pairs: [(Int64, Int64)], join: ReplicationSchema.JoinTable, adding: Bool) -> PostgresQuery {
        var bindings = PostgresBindings()
        bindings.append(pairs.map(\.0))
        bindings.append(pairs.map(\.1))
        let rows = "SELECT * FROM unnest($1::bigint[], $2::bigint[])"
        let table = SQL.name(join.name)
        guard adding else {
            return PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE (source, target) IN (\(rows))", binds: bindings)
        }
        // A link to a row the server deleted meanwhile went with it (ON DELETE CASCADE).
        let existing = guardsMissingRows
            ? " WHERE EXISTS (SELECT 1 FROM \(SQL.name(join.entity)) AS s WHERE s.pk = u.source) "
                + "AND EXISTS (SELECT 1 FROM \(SQL.name(join.target)) AS r WHERE r.pk = u.target)"
            : ""
        return PostgresQuery(
            unsafeSQL: "INSERT INTO \(table) (source, target) SELECT u.source, u.target FROM "
                + "unnest($1::bigint[], $2::bigint[]) AS u (source, target)\(existing) ON CONFLICT DO NOTHING",
            binds: bindings)
    }
}
