import Foundation
import NIOCore
import PostgresNIO
import StrataRecords

/// Pulling: rows a server application changes in PostgreSQL come back into the store
/// (decision 63). Triggers the replicator installs record each change in `strata_changes`
/// (never the replicator's own writes) and notify a following replicator. A pull takes the
/// changes in three steps, each safe to interrupt:
///
/// 1. **Claim** them (one PostgreSQL transaction), noting in `strata_pull` the claim and the
///    store's history token.
/// 2. **Key** the rows the server inserted: the store reserves keys for them, and PostgreSQL's
///    rows take those keys (foreign keys cascade); then read the claimed rows as they are now
///    (one repeatable-read transaction).
/// 3. **Apply** them as one store transaction whose author names the claim, then **finish**:
///    delete the claimed changes, write back derived columns the server wrote over.
///
/// A pull that finds a claim left by an interrupted one looks for its store transaction in
/// the history: found, it finishes the claim; not found, it releases the claim and pulls again
/// (the rows already keyed are inserted under their reserved keys).
///
/// The conflict rule, for a property changed in both places since the last exchange (the
/// store's changes not pushed yet, PostgreSQL's not pulled yet): **the store's value wins**,
/// property by property — the server's changes to other properties of the row are kept — and
/// **a deletion wins** over changes on the other side. Derived attributes are the store's: a
/// server's write to one is replaced by the store's value.
extension PostgresReplicator {
    /// The author of the store transaction that applies the pull `claim`.
    func pullAuthor(_ claim: Int64) -> String { "strata-pull:\(name):\(claim)" }
    var pullAuthorPrefix: String { "strata-pull:\(name):" }

    /// Takes the changes a server application made in PostgreSQL into the store, one store
    /// transaction for all of them, and returns what it did. Pushes first when the tables were
    /// never filled. A push should follow (``exchange()`` does both): it carries the derived
    /// values the store recomputed, and the store's side of any conflict, to PostgreSQL.
    public func pull() async throws -> PullReport {
        let connection = try await connect()
        defer { Task { try? await connection.close() } }
        return try await pull(on: connection)
    }

    /// A pull, then a push: afterwards PostgreSQL and the store hold the same rows (unless
    /// either changed meanwhile).
    public func exchange() async throws -> (pulled: PullReport, pushed: PushReport) {
        let connection = try await connect()
        defer { Task { try? await connection.close() } }
        // The first exchange copies the store before it can pull anything.
        try await prepareTables(on: connection)
        let copy = try await storedToken(on: connection) == nil ? try await push(on: connection, stopAfter: nil) : nil
        let pulled = try await pull(on: connection)
        var pushed = try await push(on: connection, stopAfter: nil)
        if let copy {
            pushed.copiedAll = true
            pushed.rows += copy.rows
            pushed.seconds += copy.seconds
        }
        return (pulled, pushed)
    }

    /// `tablesChecked`: this connection already ran ``preparePull(on:)`` (a follower does once).
    func pull(on connection: PostgresConnection, tablesChecked: Bool = false) async throws -> PullReport {
        let started = ContinuousClock.now
        var report = PullReport()
        if !tablesChecked { try await preparePull(on: connection) }
        if try await storedToken(on: connection) == nil {
            _ = try await push(on: connection, stopAfter: nil, tablesChecked: true)
        }
        // A long backlog of the store's commits goes first: a pull reads what the store changed
        // since PostgreSQL's token to find conflicts, which should be a few transactions, not
        // a restart's worth. Pushed first, the store's side of a conflict reaches PostgreSQL
        // before the pull reads it back, and the rule's outcome is the same (uncounted).
        if let pushed = try await storedToken(on: connection),
           try store.history(after: pushed, limit: transactionsPerBatch + 1).count > transactionsPerBatch {
            _ = try await push(on: connection, stopAfter: nil, tablesChecked: true)
        }
        try await recoverClaim(on: connection)
        guard let pushed = try await storedToken(on: connection),
              var claim = try await claimChanges(on: connection) else { return report }
        report.changes = claim.changes.count
        try await key(&claim, on: connection, report: &report)
        let current = try await readCurrent(claim, on: connection)
        let outcome = try apply(claim, current: current, after: pushed, report: &report)
        try await finish(claim.id, rewritingDerivedOf: outcome.derivedRewrites, on: connection)
        report.token = outcome.token
        let (seconds, attoseconds) = (ContinuousClock.now - started).components
        report.seconds = Double(seconds) + Double(attoseconds) / 1e18
        return report
    }

    /// Creates the change table, the triggers and the key sequences (after the tables). When
    /// they are all there, only the trigger function is replaced: setting a key default or a
    /// trigger locks its table against the server application's reads.
    func preparePull(on connection: PostgresConnection) async throws {
        try await prepareTables(on: connection)
        try await run(on: connection) { connection in
            var bindings = PostgresBindings()
            bindings.append(schema.tables.map(\.entity) + schema.joinTables.map(\.name))
            bindings.append(schema.tables.map(\.entity))
            let rows = try await connection.checkedQuery(PostgresQuery(unsafeSQL: ReplicationSchema.installedPullSQL,
                                                                binds: bindings), logger: logger)
            var installed = false
            for try await (triggers, keyed, tables) in rows.decode((Int64, Int64, Bool).self) {
                installed = tables && triggers == Int64(schema.tables.count + schema.joinTables.count)
                    && keyed == Int64(schema.tables.count)
            }
            for statement in installed ? [schema.pullFunctionSQL] : schema.pullSQL {
                try await connection.checkedQuery(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        }
    }

    // MARK: Claiming

    /// One change as the trigger recorded it.
    struct PulledChange {
        var table: String
        var pk: Int64
        var other: Int64?
        var op: String
        var columns: [String]?
    }

    /// The changes a pull took.
    struct Claim {
        var id: Int64
        var changes: [PulledChange]
    }

    /// Settles a claim an interrupted pull left: finished if the store committed it, else
    /// released for this pull to take again.
    func recoverClaim(on connection: PostgresConnection) async throws {
        var bindings = PostgresBindings()
        bindings.append(name)
        let rows = try await run(on: connection) {
            try await $0.checkedQuery(PostgresQuery(
                unsafeSQL: "SELECT claim, after FROM \(SQL.name(ReplicationSchema.pullTable)) "
                    + "WHERE name = $1 AND claim IS NOT NULL", binds: bindings), logger: logger)
        }
        var left: (claim: Int64, after: Int64)?
        for try await row in rows.decode((Int64, Int64).self) { left = row }
        guard let left else { return }
        let author = pullAuthor(left.claim)
        var applied = false
        var after = HistoryToken(UInt64(bitPattern: left.after))
        scan: while true {
            let page = try store.history(after: after, limit: 256)
            guard let last = page.last else { break }
            for transaction in page where transaction.author == author {
                applied = true
                break scan
            }
            after = last.token
        }
        if applied {
            try await finish(left.claim, rewritingDerivedOf: [], on: connection)
        } else {
            try await inTransaction(on: connection) { connection in
                var release = PostgresBindings()
                release.append(left.claim)
                try await connection.checkedQuery(PostgresQuery(
                    unsafeSQL: "UPDATE \(SQL.name(ReplicationSchema.changeTable)) SET claim = NULL WHERE claim = $1",
                    binds: release), logger: logger)
                try await clearClaim(on: connection)
            }
        }
    }

    /// Marks every unclaimed change of this replication's tables as this pull's; nil when
    /// there is none.
    func claimChanges(on connection: PostgresConnection) async throws -> Claim? {
        let claim = Int64.random(in: 1...Int64.max)
        let before = try store.lastHistoryToken()
        var changes: [PulledChange] = []
        try await inTransaction(on: connection) { connection in
            var bindings = PostgresBindings()
            bindings.append(claim)
            bindings.append(schema.tables.map(\.entity) + schema.joinTables.map(\.name))
            let rows = try await connection.checkedQuery(PostgresQuery(
                unsafeSQL: "UPDATE \(SQL.name(ReplicationSchema.changeTable)) SET claim = $1 "
                    + "WHERE claim IS NULL AND tbl = ANY($2::text[]) RETURNING seq, tbl, pk, other, op, cols",
                binds: bindings), logger: logger)
            var taken: [(Int64, PulledChange)] = []
            for try await (seq, table, pk, other, op, columns) in rows.decode((Int64, String, Int64, Int64?, String, [String]?).self) {
                taken.append((seq, PulledChange(table: table, pk: pk, other: other, op: op, columns: columns)))
            }
            changes = taken.sorted { $0.0 < $1.0 }.map(\.1)
            guard !changes.isEmpty else { return }
            var state = PostgresBindings()
            state.append(name)
            state.append(claim)
            state.append(Int64(bitPattern: before.value))
            try await connection.checkedQuery(PostgresQuery(
                unsafeSQL: "INSERT INTO \(SQL.name(ReplicationSchema.pullTable)) (name, claim, after) VALUES ($1, $2, $3) "
                    + "ON CONFLICT (name) DO UPDATE SET claim = EXCLUDED.claim, after = EXCLUDED.after",
                binds: state), logger: logger)
        }
        return changes.isEmpty ? nil : Claim(id: claim, changes: changes)
    }

    func clearClaim(on connection: PostgresConnection) async throws {
        var bindings = PostgresBindings()
        bindings.append(name)
        try await connection.checkedQuery(PostgresQuery(
            unsafeSQL: "UPDATE \(SQL.name(ReplicationSchema.pullTable)) SET claim = NULL WHERE name = $1",
            binds: bindings), logger: logger)
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
            guard let table = schema.tables.firstIndex(where: { $0.entity == change.table }),
                  seen.insert([Int64(table), change.pk]).inserted else { continue }
            wanted[table, default: []].append(change.pk)
        }
        guard !wanted.isEmpty else { return }
        // Rows the store already holds under that key are updates, not inserts.
        let mapping = try reserveKeys(for: wanted)
        guard !mapping.isEmpty else { return }
        try await inTransaction(on: connection) { connection in
            for (table, pairs) in mapping.sorted(by: { $0.key < $1.key }) {
                let entity = schema.tables[table].entity
                var bindings = PostgresBindings()
                bindings.append(pairs.map(\.old))
                bindings.append(pairs.map(\.new))
                let map = "unnest($1::bigint[], $2::bigint[]) AS m(old, new)"
                // The row's key (foreign keys and join rows follow: ON UPDATE CASCADE), then
                // the claim's changes of it and of its links.
                try await connection.checkedQuery(PostgresQuery(
                    unsafeSQL: "UPDATE \(SQL.name(entity)) AS t SET pk = m.new FROM \(map) WHERE t.pk = m.old",
                    binds: bindings), logger: logger)
                var changeBindings = bindings
                changeBindings.append(claim.id)
                changeBindings.append(entity)
                let changes = SQL.name(ReplicationSchema.changeTable)
                try await connection.checkedQuery(PostgresQuery(
                    unsafeSQL: "UPDATE \(changes) AS c SET pk = m.new, op = CASE WHEN c.op = 'insert' THEN 'keyed' ELSE c.op END "
                        + "FROM \(map) WHERE c.claim = $3 AND c.tbl = $4 AND c.pk = m.old", binds: changeBindings),
                    logger: logger)
                for join in schema.joinTables where join.entity == entity || join.target == entity {
                    var joinBindings = bindings
                    joinBindings.append(claim.id)
                    joinBindings.append(join.name)
                    if join.entity == entity {
                        try await connection.checkedQuery(PostgresQuery(
                            unsafeSQL: "UPDATE \(changes) AS c SET pk = m.new FROM \(map) "
                                + "WHERE c.claim = $3 AND c.tbl = $4 AND c.pk = m.old", binds: joinBindings), logger: logger)
                    }
                    if join.target == entity {
                        try await connection.checkedQuery(PostgresQuery(
                            unsafeSQL: "UPDATE \(changes) AS c SET other = m.new FROM \(map) "
                                + "WHERE c.claim = $3 AND c.tbl = $4 AND c.other = m.old", binds: joinBindings), logger: logger)
                    }
                }
            }
        }
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
            } else if let join = schema.joinTables.first(where: { $0.name == change.table }) {
                if let renamed = byEntity[join.entity]?[change.pk] { change.pk = renamed }
                if let other = change.other, let renamed = byEntity[join.target]?[other] { change.other = renamed }
            }
            claim.changes[index] = change
        }
    }
}
