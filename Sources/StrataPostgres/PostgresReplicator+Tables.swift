import Foundation
import StrataRecords

/// The replicated tables: created when missing, checked when present (a table of another shape
/// is in the way: nothing is written), and filled afresh from a snapshot of the store.
extension PostgresReplicator {
    /// Creates what is missing and checks what is there; refuses tables of another shape and a
    /// replication state kept for another model.
    func prepareTables(on connection: PostgresConnection) async throws {
        try await run(on: connection) { connection in
            let shapes = schema.expectedShapes + [
                (ReplicationSchema.stateTable, [("name", "text"), ("token", "bigint"), ("model", "text")]),
                (ReplicationSchema.replicasTable, [("number", "bigint"), ("name", "text"),
                                                   ("joined", "timestamp with time zone"),
                                                   ("retired", "timestamp with time zone"), ("store_file", "bigint")]),
            ]
            var bindings = PostgresBindings()
            bindings.append(shapes.map(\.table))
            let rows = try await connection.query(PostgresQuery(
                unsafeSQL: "SELECT table_name::text, column_name::text, data_type::text FROM information_schema.columns "
                    + "WHERE table_schema = current_schema() AND table_name = ANY($1::text[])", binds: bindings))
            var found: [String: [String: String]] = [:]
            for (table, column, type) in try rows.decode((String, String, String).self) {
                found[table, default: [:]][column] = type
            }
            // A register made before store files were recorded gains the column.
            let registerLacksFiles = found[ReplicationSchema.replicasTable].map { $0["store_file"] == nil } ?? false
            if registerLacksFiles { found[ReplicationSchema.replicasTable]?["store_file"] = "bigint" }
            for (table, columns) in shapes {
                guard let existing = found[table] else { continue }
                let wanted = Dictionary(uniqueKeysWithValues: columns.map { ($0.name, $0.type) })
                if existing != wanted {
                    let has = existing.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                    let needs = columns.map { "\($0.name) \($0.type)" }.joined(separator: ", ")
                    throw ReplicationError.tableInTheWay(table: table, reason: "it has (\(has)); the model needs (\(needs))")
                }
            }
            for statement in schema.creationSQL {
                try await connection.query(PostgresQuery(unsafeSQL: statement))
            }
            if registerLacksFiles {
                try await connection.query(PostgresQuery(
                    unsafeSQL: "ALTER TABLE \(SQL.name(ReplicationSchema.replicasTable)) ADD COLUMN IF NOT EXISTS store_file bigint"))
            }
            let keys = schema.foreignKeySQL
            if !keys.isEmpty {
                var names = PostgresBindings()
                names.append(keys.map(\.constraint))
                let existing = try await connection.query(PostgresQuery(
                    unsafeSQL: "SELECT conname::text FROM pg_constraint WHERE conname = ANY($1::text[])", binds: names))
                var present = Set<String>()
                for constraint in try existing.decode(String.self) { present.insert(constraint) }
                for key in keys where !present.contains(key.constraint) {
                    try await connection.query(PostgresQuery(unsafeSQL: key.statement))
                }
            }
            var state = PostgresBindings()
            state.append(name)
            let stored = try await connection.query(PostgresQuery(
                unsafeSQL: "SELECT model FROM \(SQL.name(ReplicationSchema.stateTable)) WHERE name = $1", binds: state))
            for model in try stored.decode(String.self) where model != modelText {
                throw ReplicationError.modelMismatch(
                    reason: "replication '\(name)' was made with another model; drop its tables to start over")
            }
        }
        try await refuseServerWritesUntilPulled(on: connection)
        try await checkDatasetModel(on: connection)
        _ = try await join(on: connection)
    }

    /// Every store of a dataset holds one model: the rules (uniqueness, validation, derived
    /// expressions) decide the same everywhere only if they are the same. A store whose model
    /// differs from another live store's is refused, naming the lines that differ.
    private func checkDatasetModel(on connection: PostgresConnection) async throws {
        let retired = try await Self.exists(ReplicationSchema.replicasTable, on: connection)
            ? "AND s.name NOT IN (SELECT r.name FROM \(SQL.name(ReplicationSchema.replicasTable)) r WHERE r.retired IS NOT NULL)"
            : ""
        var bindings = PostgresBindings()
        bindings.append(name)
        let rows = try await run(on: connection) {
            try await $0.query(PostgresQuery(
                unsafeSQL: "SELECT s.name, s.model FROM \(SQL.name(ReplicationSchema.stateTable)) s WHERE s.name <> $1 \(retired) "
                    + "ORDER BY s.name", binds: bindings))
        }
        for (other, model) in try rows.decode((String, String).self) where model != modelText {
            let mine = store.model.schemaLines, theirs = model.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let onlyMine = mine.filter { !theirs.contains($0) }, onlyTheirs = theirs.filter { !mine.contains($0) }
            var differences: [String] = onlyMine.prefix(3).map { "this store has \"\($0)\"" }
            differences += onlyTheirs.prefix(3).map { "'\(other)' has \"\($0)\"" }
            throw ReplicationError.modelMismatch(
                reason: "store '\(other)' of this dataset replicates another model ("
                    + (differences.isEmpty ? "the same lines in another order" : differences.joined(separator: "; "))
                    + "): every store of a dataset needs the same model")
        }
    }

    /// Installs the triggers that refuse a server application's writes until a store pulls
    /// (``ReplicationSchema/installedRefusalSQL``) when no store pulls yet: one check, and the
    /// triggers (which lock their tables) only when missing.
    private func refuseServerWritesUntilPulled(on connection: PostgresConnection) async throws {
        try await inTransaction(on: connection) { connection in
            // With the pull's preparation: the two would otherwise replace one function at once.
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext('strata_prepare_pull'))")
            var tables = PostgresBindings()
            tables.append(schema.tables.map(\.entity) + schema.joinTables.map(\.name))
            let rows = try await connection.query(PostgresQuery(unsafeSQL: ReplicationSchema.installedRefusalSQL,
                                                                binds: tables))
            guard let (recording, refusing) = try rows.decode((Int64, Int64).self).first, recording == 0,
                  refusing < Int64(schema.tables.count + schema.joinTables.count) else { return }
            let namespace = try await connection.query("SELECT current_schema()::text")
            guard let schemaName = try namespace.decode(String.self).first else { return }
            for statement in schema.refusalFunctionsSQL(in: schemaName) + schema.refusalSQL {
                try await connection.query(PostgresQuery(unsafeSQL: statement))
            }
        }
    }

    /// The token PostgreSQL holds for this replication, `nil` before the first push.
    func storedToken(on connection: PostgresConnection) async throws -> HistoryToken? {
        try await run(on: connection) { connection in
            var bindings = PostgresBindings()
            bindings.append(name)
            let rows = try await connection.query(PostgresQuery(
                unsafeSQL: "SELECT token FROM \(SQL.name(ReplicationSchema.stateTable)) WHERE name = $1", binds: bindings))
            for token in try rows.decode(Int64.self) { return HistoryToken(UInt64(bitPattern: token)) }
            return nil
        }
    }

    /// Empties the replicated tables and fills them from one snapshot of the store, with that
    /// snapshot's token, in one PostgreSQL transaction. Returns the token.
    func copyAll(on connection: PostgresConnection, report: inout PushReport) async throws -> HistoryToken {
        let snapshot = try store.snapshot()
        defer { snapshot.close() }
        let reader = snapshot.reader
        guard try reader.isRecordingHistory() else { throw ReplicationError.historyNotRecorded }
        let token = try reader.lastHistoryToken()
        var rows = 0
        try await inTransaction(on: connection) { connection in
            // Under the register's lock, checked again: a store that joined since the caller
            // looked has rows here that emptying the tables would lose. With others, this
            // store (registered first, so holding the dataset's first keys) upserts its rows
            // over theirs, keys apart, and the others' queues take them (decision 110).
            try await connection.query(PostgresQuery(
                unsafeSQL: "SELECT pg_advisory_xact_lock(hashtext('strata_replicas'))"))
            let tables = (schema.tables.map(\.entity) + schema.joinTables.map(\.name)).map(SQL.name)
            if !tables.isEmpty, try await !hasOtherStores(on: connection) {
                try await connection.query(PostgresQuery(unsafeSQL: "TRUNCATE \(tables.joined(separator: ", "))"))
                // Emptied: the rows go in by COPY, none of them there to upsert over.
                rows = try await copyRows(from: reader, on: connection)
                try await storeToken(token, on: connection)
                return
            }
            // The rows as insert changes, written in slices (memory stays bounded).
            var batch = BatchStatements(schema: schema)
            func flush() async throws {
                guard batch.changeCount > 0 else { return }
                let statements = try batch.statements()
                for query in statements.queries { try await connection.query(query) }
                rows += statements.rows
                batch = BatchStatements(schema: schema)
            }
            for entity in store.model.entities {
                let toOnes = entity.relationships.filter { !$0.isToMany }
                let joins = entity.relationships.filter {
                    schema.joinBySide["\(entity.name).\($0.name)"]?.isSource == true
                }
                for id in try reader.objects(entity.name) {
                    guard let values = try reader.values(of: id) else { continue }
                    var targets: [String: ObjectID?] = [:]
                    for relationship in toOnes { targets[relationship.name] = try reader.target(of: relationship.name, of: id) }
                    var changes = [HistoryChange(kind: .insert, id: id, values: values, toOneTargets: targets)]
                    for relationship in joins {
                        for member in try reader.members(of: relationship.name, of: id) {
                            changes.append(HistoryChange(kind: .link, id: id, relationship: relationship.name, other: member))
                        }
                    }
                    batch.add(changes)
                    if batch.changeCount >= 5_000 { try await flush() }
                }
            }
            try await flush()
            try await storeToken(token, on: connection)
        }
        report.rows += rows
        report.copiedAll = true
        return token
    }

    /// Records `token` (and the model) as this replication's, within the caller's transaction:
    /// over a token already there (`replacing`, a copy's), or only where there is none (a join's).
    func storeToken(_ token: HistoryToken, replacing: Bool = true, on connection: PostgresConnection) async throws {
        var bindings = PostgresBindings()
        bindings.append(name)
        bindings.append(Int64(bitPattern: token.value))
        bindings.append(modelText)
        _ = try await run(on: connection) { connection in
            try await connection.query(PostgresQuery(
                unsafeSQL: "INSERT INTO \(SQL.name(ReplicationSchema.stateTable)) (name, token, model) VALUES ($1, $2, $3) "
                    + (replacing ? "ON CONFLICT (name) DO UPDATE SET token = EXCLUDED.token, model = EXCLUDED.model"
                        : "ON CONFLICT (name) DO NOTHING"), binds: bindings))
        }
    }

    /// Every row and link of the snapshot into the emptied tables with `COPY`, a few MiB at a
    /// time (foreign keys are checked at commit: the order of tables does not matter). Returns
    /// the rows and links copied.
    private func copyRows(from reader: RecordReader, on connection: PostgresConnection) async throws -> Int {
        // The foreign keys between the tables are dropped for the copy and added back after
        // it, same names and definitions: adding one checks every row in one join, where a kept
        // one queues a check per row copied (most of the server's time in the copy, decision
        // 111). The tables were emptied in this transaction, which holds them exclusively.
        // Only the tables' owner may: a replicator given rights on tables someone else made
        // copies with the keys in place.
        var bindings = PostgresBindings()
        bindings.append(schema.tables.map(\.entity) + schema.joinTables.map(\.name))
        let owned = try await connection.query(PostgresQuery(
            unsafeSQL: "SELECT coalesce(bool_and(pg_has_role(c.relowner, 'USAGE')), true) FROM pg_class c "
                + "WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1::text[])", binds: bindings))
        let keys = try owned.decode(Bool.self).first == true
            ? try await connection.query(PostgresQuery(unsafeSQL: ReplicationSchema.foreignKeysSQL, binds: bindings))
                .decode((String, String, String).self)
            : []
        for (table, constraint, _) in keys {
            try await connection.query(PostgresQuery(
                unsafeSQL: "ALTER TABLE \(SQL.name(table)) DROP CONSTRAINT \(SQL.name(constraint))"))
        }
        let copied = try await copyRowsWithoutKeys(from: reader, on: connection)
        for (table, constraint, definition) in keys {
            try await connection.query(PostgresQuery(
                unsafeSQL: "ALTER TABLE \(SQL.name(table)) ADD CONSTRAINT \(SQL.name(constraint)) \(definition)"))
        }
        return copied
    }

    private func copyRowsWithoutKeys(from reader: RecordReader, on connection: PostgresConnection) async throws -> Int {
        var copied = 0
        func send(_ data: inout CopyRows, into table: String, columns: [String]) async throws {
            guard data.rows > 0 else { return }
            data.finish()
            try await connection.copy("COPY \(SQL.name(table)) (\(columns.map(SQL.name).joined(separator: ", "))) FROM STDIN",
                                      data: data.bytes)
            copied += data.rows
            data = CopyRows()
        }
        for table in schema.tables {
            let columns = table.columns.filter { $0.name != "pk" }
            var data = CopyRows()
            for id in try reader.objects(table.entity) {
                guard let values = try reader.values(of: id) else { continue }
                data.startRow()
                data.append(key: Int64(bitPattern: id.primaryKey))
                for column in columns {
                    if column.target != nil {
                        data.append(key: try reader.target(of: column.name, of: id).map { Int64(bitPattern: $0.primaryKey) })
                    } else {
                        data.append(values[column.name] ?? .null)
                    }
                }
                if data.bytes.count >= 4 << 20 { try await send(&data, into: table.entity, columns: ["pk"] + columns.map(\.name)) }
            }
            try await send(&data, into: table.entity, columns: ["pk"] + columns.map(\.name))
        }
        for join in schema.joinTables {
            var data = CopyRows()
            for id in try reader.objects(join.entity) {
                for member in try reader.members(of: join.relationship, of: id) {
                    data.startRow()
                    data.append(key: Int64(bitPattern: id.primaryKey))
                    data.append(key: Int64(bitPattern: member.primaryKey))
                }
                if data.bytes.count >= 4 << 20 { try await send(&data, into: join.name, columns: ["source", "target"]) }
            }
            try await send(&data, into: join.name, columns: ["source", "target"])
        }
        return copied
    }
}
