import Foundation
import StrataRecords
import StrataStorage

/// The stores of one dataset (decision 110): PostgreSQL's `strata_replicas` names each store
/// replicating into its tables and the range of primary keys it allocates from, so no two
/// stores ever give two rows one key. The store that creates the dataset keeps the range its
/// keys are in (0, for every store made before ranges); a store that joins later comes empty,
/// takes the lowest range never handed out, and takes the dataset's rows from PostgreSQL
/// instead of copying its own over them.
extension PostgresReplicator {
    /// This store's place in the dataset.
    struct Membership {
        /// The range of primary keys the store allocates from.
        var range: PrimaryKeyRange
        /// Other stores replicate into the same tables: a first push must not empty them.
        var hasOtherStores: Bool
        /// The store joined stores registered before it (so it takes their rows), rather than
        /// creating the dataset (so it copies its own, even if others joined since).
        var joinedOthers: Bool
    }

    /// The author of the store transaction that takes a joining store's first copy of the
    /// dataset: its token is where the store's pushes start.
    var bootstrapAuthor: String { "strata-join:\(name)" }

    /// Registers this store in `strata_replicas` (once) and makes the store allocate from the
    /// range registered for it. Under a transaction-level advisory lock, so two stores joining
    /// at once get different ranges. Replications made before the register (a row in
    /// `strata_replication` and none here) are registered first, the earliest-named with range
    /// 0, where their keys are.
    ///
    /// Throws ``ReplicationError/joinRefused(name:reason:)`` for a store that holds rows of its
    /// own and would join a dataset other stores write to (its keys could collide with theirs),
    /// or whose name was retired.
    func join(on connection: PostgresConnection) async throws -> Membership {
        var membership: Membership?
        try await inTransaction(on: connection) { connection in
            try await connection.query(PostgresQuery(
                unsafeSQL: "SELECT pg_advisory_xact_lock(hashtext('strata_replicas'))"))
            let table = SQL.name(ReplicationSchema.replicasTable)
            var registered: [(number: Int64, name: String, retired: Bool, file: Int64?)] = []
            let rows = try await connection.query(PostgresQuery(
                unsafeSQL: "SELECT number, name, retired IS NOT NULL, store_file FROM \(table) ORDER BY number"))
            for row in try rows.decode((Int64, String, Bool, Int64?).self) { registered.append(row) }
            // Replications that pushed before the register.
            let legacy = try await connection.query(PostgresQuery(
                unsafeSQL: "SELECT name FROM \(SQL.name(ReplicationSchema.stateTable)) s WHERE NOT EXISTS "
                    + "(SELECT 1 FROM \(table) r WHERE r.name = s.name) ORDER BY name"))
            var legacyNames: Set<String> = []
            for legacyName in try legacy.decode(String.self) {
                legacyNames.insert(legacyName)
                let number = registered.contains { $0.number == 0 } ? (registered.map(\.number).max() ?? -1) + 1 : 0
                try await insertReplica(number, name: legacyName, file: nil, on: connection)
                registered.append((number, legacyName, false, nil))
            }
            // The store file's id (random at creation, kept by compaction) tells one store from
            // another under a wrong name, and a file copied or restored from a backup from the
            // store it came from.
            let info = try store.info()
            let file = Int64(bitPattern: info.fileID)
            if let other = registered.first(where: { $0.file == file && $0.name != name && !$0.retired }) {
                throw ReplicationError.joinRefused(
                    name: name, reason: "this store file is registered in the dataset as '\(other.name)': replicate it "
                        + "under that name (--name \(other.name)). A copy of that store's file cannot join as a store of "
                        + "its own: make a new store from the dataset (strata replicate NEW.strata --from URL --name NAME)")
            }
            let others = registered.contains { $0.name != name }
            if let mine = registered.first(where: { $0.name == name }) {
                guard !mine.retired else {
                    throw ReplicationError.joinRefused(name: name, reason: "the name was retired from the dataset; "
                                                       + "a store joins again under a new name")
                }
                // A name registered before file ids were kept is claimed by a store that holds its
                // range, or by the replication registered just now from the time before the register.
                let held = try store.read { try $0.keyRange() }
                let claimable = mine.file == nil && (held.number == mine.number || legacyNames.contains(name))
                guard mine.file == file || claimable else {
                    throw ReplicationError.joinRefused(
                        name: name, reason: "'\(name)' is another store file in the dataset: this file is a copy, a "
                            + "store restored from a backup, or another store under the wrong name. A store takes "
                            + "the place of none: join a new one (strata replicate NEW.strata --from URL --name NAME) "
                            + "and retire the old name (--leave)")
                }
                try refuseReadOnly(info, taking: mine.number, holding: held)
                if mine.file == nil { try await recordFile(file, of: name, on: connection) }
                // Registered first: it created the dataset.
                let first = registered.allSatisfy { $0.number >= mine.number }
                membership = Membership(range: try self.range(mine.number), hasOtherStores: others, joinedOthers: !first)
                return
            }
            guard try store.read({ try $0.isRecordingHistory() }) else { throw ReplicationError.historyNotRecorded }
            let held = try store.read { try $0.keyRange() }
            if !others {
                // The store creates the dataset and keeps its range.
                try await insertReplica(Int64(held.number), name: name, file: file, on: connection)
                membership = Membership(range: held, hasOtherStores: false, joinedOthers: false)
                return
            }
            let rowsHeld = try store.read { reader in
                try store.model.entities.reduce(0) { $0 + (try reader.count($1.name)) }
            }
            guard rowsHeld == 0 else {
                let names = registered.map(\.name).sorted().joined(separator: ", ")
                throw ReplicationError.joinRefused(
                    name: name, reason: "the store holds \(rowsHeld) rows of its own and the dataset has stores "
                        + "already (\(names)): their keys could collide. A store joins a dataset empty and takes "
                        + "the dataset's rows from PostgreSQL (strata replicate NEW.strata --from URL --name NAME); "
                        + "a copy of another store's file cannot join in its place")
            }
            let number = (registered.map(\.number).max() ?? -1) + 1
            let range = try self.range(number)
            try refuseReadOnly(info, taking: number, holding: held)
            try await insertReplica(number, name: name, file: file, on: connection)
            // The store takes its range before the registration commits: a store that cannot
            // (opened read-only) leaves no registration behind.
            try adopt(range)
            membership = Membership(range: range, hasOtherStores: true, joinedOthers: true)
        }
        guard let membership else { throw ReplicationError.server(message: "the dataset's register was not read", sqlState: nil) }
        try adopt(membership.range)
        // With several stores, every push is recorded for the others from the start, whether
        // or not any store pulls yet: one that pulls later must find them.
        if membership.hasOtherStores { try await installRecording(on: connection) }
        // This session's writes are this store's: the change triggers give them to every other
        // store's queue, none to its own.
        _ = try await run(on: connection) { connection in
            try await connection.query(PostgresQuery(
                unsafeSQL: "SELECT set_config(\(SQL.literal(ReplicationSchema.originSetting)), "
                    + "\(SQL.literal(String(membership.range.number))), false)"))
        }
        return membership
    }

    /// A store opened read-only cannot take the range the dataset hands it: refused before
    /// anything is registered, rather than failing after.
    private func refuseReadOnly(_ info: StoreInfo, taking number: Int64, holding held: PrimaryKeyRange) throws {
        guard info.isReadOnly, Int64(held.number) != number else { return }
        throw ReplicationError.joinRefused(
            name: name, reason: "the store must take key range \(number) and it is open read-only: replicate it "
                + "once read-write (strata replicate … --pull)")
    }

    /// Makes the store allocate from `range` (a store transaction, when it does not already).
    private func adopt(_ range: PrimaryKeyRange) throws {
        guard try store.read({ try $0.keyRange() }) != range else { return }
        try store.write { tx in try tx.adoptKeyRange(range) }
    }

    /// Takes this store out of its dataset: pushes what it has not pushed yet, then retires its
    /// name and range in `strata_replicas` and drops its queue of changes, so the dataset stops
    /// keeping changes for a store that will not pull them. Its rows stay in the dataset under
    /// their keys, and the range is never handed out again; the name cannot join again (a store
    /// that comes back joins under a new one, from the dataset). Returns the last push and how
    /// many queued changes were dropped.
    ///
    /// A store whose writers go on committing would lose what they commit after the last push:
    /// the retirement is committed only if the store committed nothing since that push (else it
    /// is rolled back and the store pushes again, a few times, then gives up with
    /// ``ReplicationError/leaveRefused(name:reason:)``); a commit in the last round trip, after
    /// the check, is reported as ``ReplicationError/leftWithUnpushedWrites(name:transactions:)``.
    /// Stop the writers first.
    public func leave() async throws -> (pushed: PushReport, dropped: Int) {
        let connection = try await connect()
        defer { connection.close() }
        var pushed = PushReport()
        for _ in 0..<5 {
            let last = try await push(on: connection, stopAfter: nil)
            pushed.transactions += last.transactions
            pushed.changes += last.changes
            pushed.rows += last.rows
            pushed.batches += last.batches
            pushed.retries += last.retries
            pushed.seconds += last.seconds
            pushed.copiedAll = pushed.copiedAll || last.copiedAll
            pushed.token = last.token
            pushed.lagSeconds = last.lagSeconds ?? pushed.lagSeconds
            let hook = beforeRetiring.withLock { $0 }
            let store = self.store
            let name = self.name
            guard let dropped = try await Self.retire(name, on: connection, unless: {
                try hook?()
                return try store.lastHistoryToken().value > last.token.value
            }) else { continue }
            let after = try store.history(after: last.token, limit: 1_000)
            guard after.isEmpty else { throw ReplicationError.leftWithUnpushedWrites(name: name, transactions: after.count) }
            return (pushed, dropped)
        }
        throw ReplicationError.leaveRefused(name: name, reason: "the store kept committing through five pushes while "
                                            + "it tried to leave: stop its writers, then leave")
    }

    /// Takes the store registered as `name` out of the dataset at `destination` when that store
    /// is gone (its machine lost): as ``leave()`` without the last push, so its unpushed writes
    /// are lost with it. Returns how many queued changes were dropped; 0 for a name that is not
    /// registered or already retired.
    public static func retire(_ name: String, at destination: PostgresDestination) async throws -> Int {
        let connection = try await PostgresConnection.connect(to: destination)
        defer { connection.close() }
        return try await retire(name, on: connection) ?? 0
    }

    /// Retires `name` and drops its queue, in one PostgreSQL transaction under the register's
    /// lock; rolled back, returning nil, when `unless` says so just before the commit.
    private static func retire(_ name: String, on connection: PostgresConnection,
                               unless: () throws -> Bool = { false }) async throws -> Int? {
        try await connection.query("BEGIN")
        do {
            let dropped = try await retireLocked(name, on: connection)
            if try unless() {
                try await connection.query("ROLLBACK")
                return nil
            }
            try await connection.query("COMMIT")
            return dropped
        } catch {
            _ = try? await connection.query("ROLLBACK")
            throw error
        }
    }

    /// ``retire(_:on:)``'s work inside its transaction.
    private static func retireLocked(_ name: String, on connection: PostgresConnection) async throws -> Int {
        try await connection.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(hashtext('strata_replicas'))"))
        guard try await exists(ReplicationSchema.replicasTable, on: connection) else { return 0 }
        var bindings = PostgresBindings()
        bindings.append(name)
        let retired = try await connection.query(PostgresQuery(
            unsafeSQL: "UPDATE \(SQL.name(ReplicationSchema.replicasTable)) SET retired = now() "
                + "WHERE name = $1 AND retired IS NULL RETURNING number", binds: bindings))
        // The change table exists once any store has recorded changes.
        guard let number = try retired.decode(Int64.self).first,
              try await exists(ReplicationSchema.changeTable, on: connection) else { return 0 }
        var queue = PostgresBindings()
        queue.append(number)
        return try await connection.query(PostgresQuery(
            unsafeSQL: "DELETE FROM \(SQL.name(ReplicationSchema.changeTable)) AS c WHERE c.replica = $1 RETURNING 1",
            binds: queue)).count
    }

    /// Whether `table` exists in the connection's schema.
    static func exists(_ table: String, on connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.query(PostgresQuery(
            unsafeSQL: "SELECT to_regclass(\(SQL.literal(SQL.name(table)))) IS NOT NULL"))
        return try rows.decode(Bool.self).first == true
    }

    /// The dataset's register, by number (empty before there is one), retired stores included.
    func registeredStores(on connection: PostgresConnection) async throws
        -> [(number: Int64, name: String, retired: Bool)] {
        try await run(on: connection) { connection in
            guard try await Self.exists(ReplicationSchema.replicasTable, on: connection) else { return [] }
            let rows = try await connection.query(PostgresQuery(
                unsafeSQL: "SELECT number, name, retired IS NOT NULL FROM \(SQL.name(ReplicationSchema.replicasTable)) "
                    + "ORDER BY number"))
            return try rows.decode((Int64, String, Bool).self).map { (number: $0.0, name: $0.1, retired: $0.2) }
        }
    }

    /// Whether other stores than this one are registered in the dataset (retired ones too:
    /// their rows are still there).
    func hasOtherStores(on connection: PostgresConnection) async throws -> Bool {
        var bindings = PostgresBindings()
        bindings.append(name)
        let rows = try await run(on: connection) { connection in
            try await connection.query(PostgresQuery(
                unsafeSQL: "SELECT count(*) FROM \(SQL.name(ReplicationSchema.replicasTable)) WHERE name <> $1",
                binds: bindings))
        }
        return try rows.decode(Int64.self).contains { $0 > 0 }
    }

    private func insertReplica(_ number: Int64, name: String, file: Int64?, on connection: PostgresConnection) async throws {
        var bindings = PostgresBindings()
        bindings.append(number)
        bindings.append(name)
        bindings.append(file)
        try await connection.query(PostgresQuery(
            unsafeSQL: "INSERT INTO \(SQL.name(ReplicationSchema.replicasTable)) (number, name, store_file) "
                + "VALUES ($1, $2, $3)", binds: bindings))
    }

    private func recordFile(_ file: Int64, of name: String, on connection: PostgresConnection) async throws {
        var bindings = PostgresBindings()
        bindings.append(file)
        bindings.append(name)
        try await connection.query(PostgresQuery(
            unsafeSQL: "UPDATE \(SQL.name(ReplicationSchema.replicasTable)) SET store_file = $1 WHERE name = $2",
            binds: bindings))
    }

    private func range(_ number: Int64) throws -> PrimaryKeyRange {
        guard number >= 0, let range = PrimaryKeyRange(number: UInt64(number)) else {
            throw ReplicationError.joinRefused(name: name, reason: "the dataset has handed out every range of keys "
                                               + "(\(PrimaryKeyRange.rangeCount))")
        }
        return range
    }

    /// A joining store's first copy of the dataset: every row and link PostgreSQL holds, read in
    /// one repeatable-read snapshot and inserted under their keys as one store transaction
    /// (derived values computed by the store), then this replication's token set to that
    /// transaction's, so the store's pushes start after it. A run killed between the store's
    /// commit and PostgreSQL's finds the transaction by its author and sets the token.
    func bootstrap(on connection: PostgresConnection, report: inout PushReport) async throws -> HistoryToken {
        if let token = try lastBootstrap() {
            try await storeToken(token, replacing: false, on: connection)
            return token
        }
        var rows: [String: [Int64: [String: PulledValue]]] = [:]
        var links: [String: [(Int64, Int64)]] = [:]
        try await inTransaction(on: connection, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ") { connection in
            // Writers that ran before this store registered queued nothing for it: the lock waits
            // for every one still open and the snapshot, taken by the first read after it,
            // holds what they wrote (writers block until the copy is read).
            let tables = (schema.tables.map(\.entity) + schema.joinTables.map(\.name)).map(SQL.name)
            if !tables.isEmpty {
                try await connection.query(PostgresQuery(unsafeSQL: "LOCK TABLE \(tables.joined(separator: ", ")) IN SHARE MODE"))
            }
            for table in schema.tables {
                let columns = table.pulledColumns
                let list = (["pk"] + columns.map(\.name)).map(SQL.name).joined(separator: ", ")
                let result = try await connection.query(PostgresQuery(unsafeSQL: "SELECT \(list) FROM \(SQL.name(table.entity))"))
                var found: [Int64: [String: PulledValue]] = [:]
                for cells in result {
                    var values: [String: PulledValue] = [:]
                    for (index, column) in columns.enumerated() {
                        values[column.name] = try Self.decode(cells[index + 1], column: column)
                    }
                    found[try cells[0].decode(Int64.self)] = values
                }
                rows[table.entity] = found
            }
            for join in schema.joinTables {
                let result = try await connection.query(PostgresQuery(unsafeSQL: "SELECT source, target FROM \(SQL.name(join.name))"))
                links[join.name] = try result.decode((Int64, Int64).self).map { ($0, $1) }
            }
        }
        let copied = try insertCopy(rows: rows, links: links)
        report.rows += copied
        report.copiedAll = true
        report.joinedDataset = true
        // An empty dataset gives an empty copy, which records nothing: the store's pushes start
        // after whatever its history holds (nothing of the dataset's).
        guard let token = try lastBootstrap() ?? (copied == 0 && links.values.allSatisfy(\.isEmpty)
                                                  ? try store.lastHistoryToken() : nil) else {
            throw ReplicationError.server(message: "the store did not record its copy of the dataset", sqlState: nil)
        }
        try await storeToken(token, replacing: false, on: connection)
        return token
    }

    /// Inserts a copy of the dataset's rows and links under their keys, as one store
    /// transaction authored as ``bootstrapAuthor``; returns the rows inserted.
    private func insertCopy(rows: [String: [Int64: [String: PulledValue]]],
                            links: [String: [(Int64, Int64)]]) throws -> Int {
        var copied = 0
        try store.write { tx in
            // Checked in the transaction that copies: a row the program inserted meanwhile
            // would sit before the copy's token and never be pushed.
            for entity in store.model.entities where try tx.count(entity.name) > 0 {
                throw ReplicationError.joinRefused(name: name, reason: "the store holds rows of its own (\(entity.name)) "
                                                   + "and was never copied from the dataset it joined")
            }
            tx.author = bootstrapAuthor
            var toOnes: [(ObjectID, String, ObjectID?)] = []
            for table in schema.tables {
                guard let entity = store.model.entities.first(where: { $0.name == table.entity }) else { continue }
                for (pk, values) in rows[table.entity] ?? [:] {
                    let id = ObjectID(entity: entity.name, primaryKey: UInt64(bitPattern: pk))
                    var attributes: [String: StoredValue] = [:]
                    for (column, value) in values {
                        switch value {
                        case .stored(let stored):
                            // NULL is nil for an optional attribute (a store wrote it so); for a
                            // required one, only a server can have left it: the model's default.
                            if stored != .null || entity.attributes.first(where: { $0.name == column })?.isOptional == true {
                                attributes[column] = stored
                            }
                        case .target(let target):
                            guard let target, let relationship = entity.relationships.first(where: { $0.name == column })
                            else { continue }
                            toOnes.append((id, column, ObjectID(entity: relationship.target, primaryKey: UInt64(bitPattern: target))))
                        }
                    }
                    do {
                        try tx.insert(entity.name, primaryKey: id.primaryKey, attributes)
                    } catch {
                        throw ReplicationError.pullRejected(entity: entity.name, primaryKey: pk, reason: "\(error)")
                    }
                    copied += 1
                }
            }
            for (id, relationship, target) in toOnes {
                do {
                    try tx.set(relationship, of: id, to: target)
                } catch {
                    throw ReplicationError.pullRejected(entity: id.entity, primaryKey: Int64(bitPattern: id.primaryKey),
                                                        reason: "\(error)")
                }
            }
            for join in schema.joinTables {
                for (source, target) in links[join.name] ?? [] {
                    let from = ObjectID(entity: join.entity, primaryKey: UInt64(bitPattern: source))
                    let to = ObjectID(entity: join.target, primaryKey: UInt64(bitPattern: target))
                    do {
                        try tx.add(to, to: join.relationship, of: from)
                    } catch {
                        throw ReplicationError.pullRejected(entity: join.entity, primaryKey: source, reason: "\(error)")
                    }
                }
            }
        }
        return copied
    }

    /// Whether `name` names a store of the dataset at `destination` already (a store made to
    /// join it needs a name of its own).
    public static func isRegistered(_ name: String, at destination: PostgresDestination) async throws -> Bool {
        let connection = try await PostgresConnection.connect(to: destination)
        defer { connection.close() }
        var bindings = PostgresBindings()
        bindings.append(name)
        // Either table names it: the register, or (a dataset from before the register) the
        // replication state.
        for table in [ReplicationSchema.replicasTable, ReplicationSchema.stateTable] {
            guard try await exists(table, on: connection) else { continue }
            let found = try await connection.query(PostgresQuery(
                unsafeSQL: "SELECT count(*) FROM \(SQL.name(table)) WHERE name = $1", binds: bindings))
            if try found.decode(Int64.self).contains(where: { $0 > 0 }) { return true }
        }
        return false
    }

    /// The model text of the dataset at `destination` (every replication into one dataset has
    /// one model), nil when nothing replicates there yet: what a store made to join it from
    /// PostgreSQL alone is made with.
    public static func datasetModelText(at destination: PostgresDestination) async throws -> String? {
        let connection = try await PostgresConnection.connect(to: destination)
        defer { connection.close() }
        guard try await exists(ReplicationSchema.stateTable, on: connection) else { return nil }
        let rows = try await connection.query(PostgresQuery(
            unsafeSQL: "SELECT DISTINCT model FROM \(SQL.name(ReplicationSchema.stateTable))"))
        let models = try rows.decode(String.self)
        guard models.count <= 1 else {
            throw ReplicationError.modelMismatch(reason: "the dataset's replications hold \(models.count) different models")
        }
        return models.first
    }

    /// The token of the store transaction that took this replication's first copy of the
    /// dataset, if the history holds one.
    private func lastBootstrap() throws -> HistoryToken? {
        var found: HistoryToken?
        do {
            try forEachHistoryTransaction(after: .start) { transaction in
                if transaction.author == bootstrapAuthor { found = transaction.token }
                return true
            }
        } catch StrataError.historyPurged {
            throw ReplicationError.joinRefused(name: name, reason: "the store's history was purged before its copy of "
                                               + "the dataset was recorded in PostgreSQL; join again from a new store")
        }
        return found
    }
}
