import Foundation
import StrataRecords
import StrataStorage

/// Pulling: rows a server application changes in PostgreSQL come back into the store
/// (decision 63). Triggers the replicator installs record each change in `strata_changes`
/// (never the replicator's own writes) and notify a following replicator. A pull takes the
/// changes in steps, each safe to interrupt, one pull per replication at a time (an advisory
/// lock):
///
/// 1. **Claim** them (one PostgreSQL transaction), noting in `strata_pull` the claim and the
///    store's history token.
/// 2. **Key** the rows the server inserted: the store reserves keys for them, and PostgreSQL's
///    rows take those keys (foreign keys cascade, and so do changes recorded meanwhile); then
///    read the claimed rows as they are now (one repeatable-read transaction).
/// 3. **Apply** them as one store transaction whose author names the claim.
/// 4. The **push** of that transaction ends the claim: it carries what the store computed
///    (derived values, defaults, delete rules) but not the server's own writes back
///    (``ServerWrites``: the server may have written again since the read), and deletes the
///    claimed changes with the token it moves. A claim the store applied nothing for ends at once.
///
/// A pull that finds a claim left by an interrupted one looks for its store transaction in
/// the history: found, it pushes it; not found, it releases the claim and pulls again (the
/// rows already keyed are updated under their reserved keys).
///
/// The conflict rule, for a property changed in both places since the last exchange (the
/// store's changes not pushed yet, PostgreSQL's not pulled yet): **the store's value wins**,
/// property by property — the server's changes to other properties of the row are kept — and
/// **a deletion wins** over changes on the other side. Derived attributes are the store's: a
/// server's write to one is replaced by the store's value.
extension PostgresReplicator {

    /// Takes the changes a server application made in PostgreSQL into the store, one store
    /// transaction for all of them, and returns what it did. Pushes first when the tables were
    /// never filled. A push should follow (``exchange()`` does both): it carries the derived
    /// values the store recomputed, and the store's side of any conflict, to PostgreSQL.
    public func pull() async throws -> PullReport {
        let connection = try await connect()
        defer { connection.close() }
        return try await pull(on: connection)
    }

    /// A pull, then a push: afterwards PostgreSQL and the store hold the same rows (unless
    /// either changed meanwhile).
    public func exchange() async throws -> (pulled: PullReport, pushed: PushReport) {
        let connection = try await connect()
        defer { connection.close() }
        // The first exchange copies the store before it can pull anything.
        try await prepareTables(on: connection)
        let copy = try await storedToken(on: connection) == nil ? try await push(on: connection, stopAfter: nil) : nil
        let pulled = try await pull(on: connection)
        var pushed = try await push(on: connection, stopAfter: nil)
        if let copy {
            pushed.copiedAll = true
            pushed.joinedDataset = copy.joinedDataset
            pushed.rows += copy.rows
            pushed.seconds += copy.seconds
        }
        return (pulled, pushed)
    }

    /// `tablesChecked`: this connection already ran ``preparePull(on:)`` (a follower does once).
    func pull(on connection: PostgresConnection, tablesChecked: Bool = false) async throws -> PullReport {
        let started = ContinuousClock.now
        if !tablesChecked { try await preparePull(on: connection) }
        // One pull per replication at a time: two would claim, key and apply around each other.
        try await pullLock(on: connection, take: true)
        var report: PullReport
        do {
            report = try await pullLocked(on: connection)
        } catch {
            try? await pullLock(on: connection, take: false)
            throw error
        }
        try await pullLock(on: connection, take: false)
        let (seconds, attoseconds) = (ContinuousClock.now - started).components
        report.seconds = Double(seconds) + Double(attoseconds) / 1e18
        return report
    }

    private func pullLocked(on connection: PostgresConnection) async throws -> PullReport {
        var report = PullReport()
        // The store's changes since this replicator's previous pull are those another writer's
        // value may have overwritten (none known after a restart).
        let now = try store.lastHistoryToken()
        let previous = lastPull.withLock { last in
            defer { last = now }
            return last
        }
        var pushed = try await storedToken(on: connection)
        var pushFirst = pushed == nil
        // A claim an interrupted pull applied is pushed (which ends it) before another is taken.
        if try await settleClaims(on: connection) { pushFirst = true }
        // A long backlog of the store's commits goes first: a pull reads what the store changed
        // since PostgreSQL's token to find conflicts, which should be a few transactions, not
        // a restart's worth (nor history the store purged: the push then copies the store).
        // Pushed first, the store's side of a conflict reaches PostgreSQL before the pull reads
        // it back, and the rule's outcome is the same (uncounted).
        if !pushFirst, let pushed {
            do {
                pushFirst = try store.history(after: pushed, limit: transactionsPerBatch + 1).count > transactionsPerBatch
            } catch StrataError.historyPurged {
                pushFirst = true
            }
        }
        if pushFirst {
            pushed = try await push(on: connection, stopAfter: nil, tablesChecked: true).token
            try await settleClaims(on: connection)
        }
        guard let pushed, var claim = try await claimChanges(on: connection) else { return report }
        report.changes = claim.changes.count
        // Rows a server inserted take this store's keys only while it is the dataset's one
        // store: with several, they keep theirs (every store accepts a key from 2^62), since
        // renaming a row would rename what other stores' queues name (decision 110).
        if try await !hasOtherStores(on: connection) { try await key(&claim, on: connection, report: &report) }
        // Asked again: keying stops when a store joined meanwhile, and the rows keep their keys.
        let several = try await hasOtherStores(on: connection)
        let current = try await readCurrent(claim, on: connection)
        let before = try store.lastHistoryToken()
        let found = try await applyRefusing(claim, current: current, after: pushed, since: previous, insertingNew: several,
                                            on: connection, report: &report)
        if !found.conflicts.isEmpty {
            let names = Dictionary(uniqueKeysWithValues: try await registeredStores(on: connection).map { ($0.number, $0.name) })
            report.conflictDetails += found.conflicts.map { conflict, writer in
                var conflict = conflict
                conflict.otherWriter = writer.map { names[$0] ?? "#\($0)" }
                return conflict
            }
        }
        if let applied = try pullTransaction(claim.id, after: before) {
            report.token = applied
        } else {
            // Nothing for the store to apply (no transaction to push): the claim ends now,
            // with the store's values over the derived columns the server wrote.
            try await endClaim(claim.id, rewriting: ServerWrites(claim.changes, schema: schema).derivedRewrites,
                               on: connection)
        }
        try resolve(found.resolutions)
        return report
    }

    /// Commits the resolver's values, after the pull's transaction, as a change of the store's
    /// own (pushed like any): a row gone since is left out.
    private func resolve(_ resolutions: [(ObjectID, String, StoredValue)]) throws {
        guard !resolutions.isEmpty else { return }
        do {
            try store.write { tx in
                tx.author = "strata-resolve:\(name)"
                for (id, property, value) in resolutions where try tx.values(of: id) != nil {
                    try tx.update(id, [property: value])
                }
            }
        } catch let error as StrataError {
            let row = resolutions[0].0
            throw ReplicationError.pullRejected(entity: row.entity, primaryKey: Int64(bitPattern: row.primaryKey),
                                                reason: "the value the conflict resolver chose: \(error)")
        }
    }

    /// Takes (`take`) or gives back the session's lock on pulling this replication.
    private func pullLock(on connection: PostgresConnection, take: Bool) async throws {
        var bindings = PostgresBindings()
        bindings.append(name)
        _ = try await run(on: connection) {
            try await $0.query(PostgresQuery(
                unsafeSQL: "SELECT \(take ? "pg_advisory_lock" : "pg_advisory_unlock")(hashtext('strata_pull'), hashtext($1))",
                binds: bindings))
        }
    }

    /// Creates the change table, the triggers and the key sequences (after the tables), and
    /// mends foreign keys an older replicator made without `ON UPDATE CASCADE`. When they are
    /// all there, only the trigger functions are replaced: setting a key default or a trigger
    /// locks its table against the server application's reads.
    func preparePull(on connection: PostgresConnection) async throws {
        try await prepareTables(on: connection)
        try await installRecording(on: connection)
    }

    /// The recording half of ``preparePull(on:)``, after the tables exist: also run when a
    /// dataset has several stores, pulling or not, so no store's push goes unrecorded for the
    /// others (decision 110).
    func installRecording(on connection: PostgresConnection) async throws {
        // Two replicators preparing at once would replace the same functions concurrently
        // (PostgreSQL: "tuple concurrently updated"): one at a time, in one transaction.
        try await inTransaction(on: connection) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext('strata_prepare_pull'))")
            var bindings = PostgresBindings()
            bindings.append(schema.tables.map(\.entity) + schema.joinTables.map(\.name))
            bindings.append(schema.tables.map(\.entity))
            let rows = try await connection.query(PostgresQuery(unsafeSQL: ReplicationSchema.installedPullSQL,
                                                                binds: bindings))
            var installed = false
            var namespace = "public"
            var unmended = 0
            for (triggers, keyed, tables, schemaName, withoutCascade)
                    in try rows.decode((Int64, Int64, Bool, String, Int64).self) {
                installed = tables && triggers == Int64(4 * (schema.tables.count + schema.joinTables.count))
                    && keyed == Int64(schema.tables.count)
                namespace = schemaName
                unmended = Int(withoutCascade)
            }
            let functions = schema.pullFunctionsSQL(in: namespace)
            for statement in installed ? functions : functions + schema.pullSQL {
                try await connection.query(PostgresQuery(unsafeSQL: statement))
            }
            if unmended > 0 { try await mendForeignKeys(on: connection, tables: bindings) }
        }
    }

    /// Re-creates the foreign keys of the replicated tables that do not cascade key updates
    /// (made by a replicator from before pulling), keeping their names and delete rules, within
    /// the caller's transaction.
    private func mendForeignKeys(on connection: PostgresConnection, tables: PostgresBindings) async throws {
        let rows = try await connection.query(PostgresQuery(unsafeSQL: ReplicationSchema.foreignKeysWithoutCascadeSQL,
                                                            binds: tables))
        var statements: [String] = []
        for (table, constraint, column, target, onDelete) in try rows.decode((String, String, String, String, String).self) {
            let rule = ["c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT", "r": "RESTRICT"][onDelete] ?? "NO ACTION"
            statements.append("ALTER TABLE \(SQL.name(table)) DROP CONSTRAINT \(SQL.name(constraint)), "
                + "ADD CONSTRAINT \(SQL.name(constraint)) FOREIGN KEY (\(SQL.name(column))) REFERENCES \(SQL.name(target)) (pk) "
                + "ON DELETE \(rule) ON UPDATE CASCADE DEFERRABLE INITIALLY DEFERRED")
        }
        for statement in statements {
            try await connection.query(PostgresQuery(unsafeSQL: statement))
        }
    }

    // MARK: Keying

    /// Store keys for the rows of `wanted` (table → keys the server gave) the store does not
    /// hold, reserved in one store transaction: old key → new key per table.
    func reserveKeys(for wanted: [Int: [Int64]]) throws -> [Int: [(old: Int64, new: Int64)]] {
        var mapping: [Int: [(old: Int64, new: Int64)]] = [:]
        try store.write { tx in
            for (table, keys) in wanted {
                let entity = schema.tables[table].entity
                let fresh = try keys.filter { pk in
                    try pk <= 0 || pk >= ReplicationSchema.serverKeyBase
                        || tx.values(of: ObjectID(entity: entity, primaryKey: UInt64(pk))) == nil
                }
                guard !fresh.isEmpty else { continue }
                let reserved = try tx.reservePrimaryKeys(entity, count: fresh.count)
                mapping[table] = zip(fresh, reserved).map { ($0, Int64(bitPattern: $1)) }
            }
        }
        return mapping
    }

    /// Gives each row the server inserted (and the store does not hold) a key the store
    /// reserves, in PostgreSQL and in the claim's changes.
    func key(_ claim: inout Claim, on connection: PostgresConnection, report: inout PullReport) async throws {
        var wanted: [Int: [Int64]] = [:]
        var seen = Set<[Int64]>()
        for change in claim.changes where change.op == "insert" {
            guard let table = schema.tableByEntity[change.table],
                  seen.insert([Int64(table), change.pk]).inserted else { continue }
            wanted[table, default: []].append(change.pk)
        }
        guard !wanted.isEmpty else { return }
        // Rows the store already holds under that key are updates, not inserts.
        let mapping = try reserveKeys(for: wanted)
        guard !mapping.isEmpty else { return }
        var renamed = true
        try await inTransaction(on: connection) { connection in
            // Under the register's lock, checked again: a store that joined since may hold these
            // rows under their keys already, and renaming them would leave it a second copy.
            try await connection.query(PostgresQuery(
                unsafeSQL: "SELECT pg_advisory_xact_lock(hashtext('strata_replicas'))"))
            if try await hasOtherStores(on: connection) {
                renamed = false
                return
            }
            for (table, pairs) in mapping.sorted(by: { $0.key < $1.key }) {
                let entity = schema.tables[table].entity
                var bindings = PostgresBindings()
                bindings.append(pairs.map(\.old))
                bindings.append(pairs.map(\.new))
                let map = "unnest($1::bigint[], $2::bigint[]) AS m(old, new)"
                // The row's key (foreign keys and join rows follow: ON UPDATE CASCADE), then
                // the claim's changes of it and of its links.
                try await connection.query(PostgresQuery(
                    unsafeSQL: "UPDATE \(SQL.name(entity)) AS t SET pk = m.new FROM \(map) WHERE t.pk = m.old",
                    binds: bindings))
                // Every recorded change of those rows and their links follows, claimed or not:
                // the server may have changed them after the claim, under its own keys.
                var changeBindings = bindings
                changeBindings.append(claim.id)
                changeBindings.append(entity)
                let changes = SQL.name(ReplicationSchema.changeTable)
                try await connection.query(PostgresQuery(
                    unsafeSQL: "UPDATE \(changes) AS c SET pk = m.new, "
                        + "op = CASE WHEN c.op = 'insert' AND c.claim = $3 THEN 'keyed' ELSE c.op END "
                        + "FROM \(map) WHERE c.tbl = $4 AND c.pk = m.old", binds: changeBindings))
                for join in schema.joinTables where join.entity == entity || join.target == entity {
                    var joinBindings = bindings
                    joinBindings.append(join.name)
                    if join.entity == entity {
                        try await connection.query(PostgresQuery(
                            unsafeSQL: "UPDATE \(changes) AS c SET pk = m.new FROM \(map) "
                                + "WHERE c.tbl = $3 AND c.pk = m.old", binds: joinBindings))
                    }
                    if join.target == entity {
                        try await connection.query(PostgresQuery(
                            unsafeSQL: "UPDATE \(changes) AS c SET other = m.new FROM \(map) "
                                + "WHERE c.tbl = $3 AND c.other = m.old", binds: joinBindings))
                    }
                }
            }
        }
        guard renamed else { return }
        // The same renaming in the claim held here.
        var byEntity: [String: [Int64: Int64]] = [:]
        for (table, pairs) in mapping {
            byEntity[schema.tables[table].entity] = Dictionary(uniqueKeysWithValues: pairs.map { ($0.old, $0.new) })
            report.rowsKeyed += pairs.count
        }
        for index in claim.changes.indices {
            var change = claim.changes[index]
            if let renamed = byEntity[change.table]?[change.pk] {
                change.pk = renamed
                if change.op == "insert" { change.op = "keyed" }
            } else if let join = schema.joinTableByName[change.table].map({ schema.joinTables[$0] }) {
                if let renamed = byEntity[join.entity]?[change.pk] { change.pk = renamed }
                if let other = change.other, let renamed = byEntity[join.target]?[other] { change.other = renamed }
            }
            claim.changes[index] = change
        }
    }
}
