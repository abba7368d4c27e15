import Foundation
import StrataRecords
import StrataStorage

/// A pull's claims on the change table: taken, settled after an interruption, and ended by
/// the push that carries the store transaction applying them (see the pull's steps in
/// `PostgresReplicator+Pull.swift`).
extension PostgresReplicator {
    /// One change as the trigger recorded it.
    struct PulledChange {
        var table: String
        var pk: Int64
        var other: Int64?
        var op: String
        var columns: [String]?
        /// The store that wrote it (its range number); nil for a server application.
        var origin: Int64? = nil
    }

    /// The changes a pull took.
    struct Claim {
        var id: Int64
        var changes: [PulledChange]
    }

    /// The changes of this store's queue, with its number as `$3` (decision 110): those the
    /// triggers wrote for it, and those of a change table from before the queues, which were
    /// the one store's (range 0).
    static let inQueue = "(c.replica = $3 OR (c.replica IS NULL AND $3 = 0))"

    /// This store's queue in the change table: its range's number (adopted when it joined).
    func queueNumber() throws -> Int64 {
        Int64(try store.read { try $0.keyRange() }.number)
    }

    /// The author of the store transaction that applies the pull `claim`.
    func pullAuthor(_ claim: Int64) -> String { "strata-pull:\(name):\(claim)" }

    /// The claim a store transaction applied, when it is one of this replication's pulls.
    func pullClaim(of transaction: HistoryTransaction) -> Int64? {
        let prefix = "strata-pull:\(name):"
        guard let author = transaction.author, author.hasPrefix(prefix) else { return nil }
        return Int64(author.dropFirst(prefix.count))
    }

    /// The token of the store transaction that applied `claim`, looked for after `token`; nil
    /// when there is none (or the history there was purged: then nobody can tell, and the
    /// claim is taken again — applying a claim twice changes nothing the first did not).
    func pullTransaction(_ claim: Int64, after token: HistoryToken) throws -> HistoryToken? {
        let author = pullAuthor(claim)
        var found: HistoryToken?
        do {
            try forEachHistoryTransaction(after: token) { transaction in
                guard transaction.author == author else { return true }
                found = transaction.token
                return false
            }
        } catch StrataError.historyPurged {
            return nil
        }
        return found
    }

    /// Calls `body` with each history transaction after `token`, a page at a time, until it
    /// returns false.
    /// `reader`: read through it (a write transaction's own view), else through a fresh snapshot.
    func forEachHistoryTransaction(after token: HistoryToken, in reader: RecordReader? = nil,
                                   _ body: (HistoryTransaction) throws -> Bool) throws {
        var after = token
        while true {
            let page = try reader?.history(after: after, limit: 256) ?? store.history(after: after, limit: 256)
            guard let last = page.last else { return }
            for transaction in page where try !body(transaction) { return }
            after = last.token
        }
    }

    /// Settles what interrupted pulls left: the recorded claim, if the store applied it, waits
    /// for its push (returns true: push before claiming again); every other claim on this
    /// replication's tables — not applied, or left by a pull whose record another overwrote —
    /// is released for this pull to take again. Runs under the pull lock: no claim is live.
    @discardableResult
    func settleClaims(on connection: PostgresConnection) async throws -> Bool {
        let queue = try queueNumber()
        var bindings = PostgresBindings()
        bindings.append(name)
        bindings.append(schema.tables.map(\.entity) + schema.joinTables.map(\.name))
        bindings.append(queue)
        let rows = try await run(on: connection) {
            try await $0.query(PostgresQuery(
                unsafeSQL: "SELECT p.claim, p.after, EXISTS (SELECT 1 FROM \(SQL.name(ReplicationSchema.changeTable)) c "
                    + "WHERE c.claim IS NOT NULL AND c.claim IS DISTINCT FROM p.claim AND c.tbl = ANY($2::text[]) "
                    + "AND \(Self.inQueue)) "
                    + "FROM (SELECT (SELECT claim FROM \(SQL.name(ReplicationSchema.pullTable)) WHERE name = $1) AS claim, "
                    + "(SELECT after FROM \(SQL.name(ReplicationSchema.pullTable)) WHERE name = $1) AS after) AS p",
                binds: bindings))
        }
        var recorded: (claim: Int64, after: Int64)?
        var others = false
        for (claim, after, unrecorded) in try rows.decode((Int64?, Int64?, Bool).self) {
            if let claim, let after { recorded = (claim, after) }
            others = unrecorded
        }
        var awaitingPush = false
        if let recorded, let applied = try pullTransaction(recorded.claim, after: HistoryToken(UInt64(bitPattern: recorded.after))) {
            // Already behind PostgreSQL's token (a copy skipped it): nothing will push it.
            if let pushed = try await storedToken(on: connection), pushed.value >= applied.value {
                try await inTransaction(on: connection) { try await endClaims([recorded.claim], on: $0) }
                return try await settleClaims(on: connection)
            }
            awaitingPush = true
        }
        guard others || (recorded != nil && !awaitingPush) else { return awaitingPush }
        try await inTransaction(on: connection) { connection in
            var release = PostgresBindings()
            release.append(awaitingPush ? recorded?.claim : nil)
            release.append(schema.tables.map(\.entity) + schema.joinTables.map(\.name))
            release.append(queue)
            try await connection.query(PostgresQuery(
                unsafeSQL: "UPDATE \(SQL.name(ReplicationSchema.changeTable)) AS c SET claim = NULL "
                    + "WHERE c.claim IS NOT NULL AND c.claim IS DISTINCT FROM $1 AND c.tbl = ANY($2::text[]) "
                    + "AND \(Self.inQueue)",
                binds: release))
            if let recorded, !awaitingPush { try await clearClaim(recorded.claim, on: connection) }
        }
        return awaitingPush
    }

    /// Marks every unclaimed change of this replication's tables as this pull's; nil when
    /// there is none.
    func claimChanges(on connection: PostgresConnection) async throws -> Claim? {
        let claim = Int64.random(in: 1...Int64.max)
        let queue = try queueNumber()
        let before = try store.lastHistoryToken()
        var changes: [PulledChange] = []
        try await inTransaction(on: connection) { connection in
            var bindings = PostgresBindings()
            bindings.append(claim)
            bindings.append(schema.tables.map(\.entity) + schema.joinTables.map(\.name))
            bindings.append(queue)
            let rows = try await connection.query(PostgresQuery(
                unsafeSQL: "UPDATE \(SQL.name(ReplicationSchema.changeTable)) AS c SET claim = $1 "
                    + "WHERE c.claim IS NULL AND c.tbl = ANY($2::text[]) AND \(Self.inQueue) "
                    + "RETURNING c.seq, c.tbl, c.pk, c.other, c.op, c.cols, c.origin",
                binds: bindings))
            changes = try await Self.changesInOrder(rows)
            guard !changes.isEmpty else { return }
            var state = PostgresBindings()
            state.append(name)
            state.append(claim)
            state.append(Int64(bitPattern: before.value))
            try await connection.query(PostgresQuery(
                unsafeSQL: "INSERT INTO \(SQL.name(ReplicationSchema.pullTable)) (name, claim, after) VALUES ($1, $2, $3) "
                    + "ON CONFLICT (name) DO UPDATE SET claim = EXCLUDED.claim, after = EXCLUDED.after",
                binds: state))
        }
        return changes.isEmpty ? nil : Claim(id: claim, changes: changes)
    }

    /// Rows of `seq, tbl, pk, other, op, cols, origin`, as changes in the order they were recorded.
    private static func changesInOrder(_ rows: PostgresRows) async throws -> [PulledChange] {
        var taken: [(Int64, PulledChange)] = []
        for (seq, table, pk, other, op, columns, origin)
                in try rows.decode((Int64, String, Int64, Int64?, String, [String]?, Int64?).self) {
            taken.append((seq, PulledChange(table: table, pk: pk, other: other, op: op, columns: columns, origin: origin)))
        }
        return taken.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// What the server wrote, per claim, as the claims' changes name it (a claim whose changes
    /// are gone is absent: its transaction is pushed whole).
    func serverWrites(of claims: [Int64], on connection: PostgresConnection) async throws -> [Int64: ServerWrites] {
        var bindings = PostgresBindings()
        bindings.append(claims)
        let rows = try await run(on: connection) {
            try await $0.query(PostgresQuery(
                unsafeSQL: "SELECT claim, seq, tbl, pk, other, op, cols, origin FROM \(SQL.name(ReplicationSchema.changeTable)) "
                    + "WHERE claim = ANY($1::bigint[])", binds: bindings))
        }
        var byClaim: [Int64: [(Int64, PulledChange)]] = [:]
        for (claim, seq, table, pk, other, op, columns, origin)
                in try rows.decode((Int64, Int64, String, Int64, Int64?, String, [String]?, Int64?).self) {
            byClaim[claim, default: []].append((seq, PulledChange(table: table, pk: pk, other: other, op: op,
                                                                  columns: columns, origin: origin)))
        }
        return byClaim.mapValues { ServerWrites($0.sorted { $0.0 < $1.0 }.map(\.1), schema: schema) }
    }

    /// Within a push's PostgreSQL transaction: the claims its batch carried are done.
    func endClaims(_ claims: [Int64], on connection: PostgresConnection) async throws {
        var bindings = PostgresBindings()
        bindings.append(claims)
        bindings.append(name)
        try await connection.query(PostgresQuery(
            unsafeSQL: "DELETE FROM \(SQL.name(ReplicationSchema.changeTable)) WHERE claim = ANY($1::bigint[])",
            binds: bindings))
        try await connection.query(PostgresQuery(
            unsafeSQL: "UPDATE \(SQL.name(ReplicationSchema.pullTable)) SET claim = NULL "
                + "WHERE claim = ANY($1::bigint[]) AND name = $2", binds: bindings))
    }

    /// Ends a claim the store applied nothing for: its changes deleted and the store's
    /// derived values written over those the server wrote (`rewriting`), in one PostgreSQL
    /// transaction.
    func endClaim(_ claim: Int64, rewriting ids: [ObjectID], on connection: PostgresConnection) async throws {
        var queries: [PostgresQuery] = []
        if !ids.isEmpty {
            var batch = BatchStatements(schema: schema)
            batch.add(try derivedValues(of: ids))
            queries = try batch.statements().queries
        }
        try await inTransaction(on: connection) { connection in
            for query in queries { try await connection.query(query) }
            try await endClaims([claim], on: connection)
        }
    }

    /// Forgets the recorded claim of this replication, if it is still `claim`.
    func clearClaim(_ claim: Int64, on connection: PostgresConnection) async throws {
        var bindings = PostgresBindings()
        bindings.append(name)
        bindings.append(claim)
        try await connection.query(PostgresQuery(
            unsafeSQL: "UPDATE \(SQL.name(ReplicationSchema.pullTable)) SET claim = NULL WHERE name = $1 AND claim = $2",
            binds: bindings))
    }
}
