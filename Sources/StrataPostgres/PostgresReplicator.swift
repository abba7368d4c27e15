import Foundation
import Synchronization
import StrataRecords
import StrataStorage

/// Replicates a Strata store to a PostgreSQL database: the store's model becomes tables (see
/// ``push()``), and the Strata transactions of its persistent history are applied in commit
/// order, each whole within one PostgreSQL transaction (consecutive ones grouped, see
/// ``init(store:destination:name:transactionsPerBatch:resolveConflict:)``), with the token of the last one
/// applied stored in the same PostgreSQL transaction — so a replication stopped at any point
/// (a killed process, a dropped connection) resumes exactly where it stopped, applying nothing
/// twice.
///
/// ```swift
/// let store = try RecordStore(path: "app.strata", options: options)   // history recorded
/// let replicator = PostgresReplicator(store: store,
///                                     destination: try PostgresDestination(url: "postgres://app@db/app"))
/// let report = try await replicator.push()
/// ```
public final class PostgresReplicator: Sendable {
    /// The store replicated.
    public let store: RecordStore
    /// Where to.
    public let destination: PostgresDestination
    /// The replication's name in PostgreSQL's `strata_replication` table (several stores can
    /// replicate into one database under different names, into different tables).
    public let name: String
    let schema: ReplicationSchema

    /// At most this many Strata transactions go into one PostgreSQL transaction.
    public let transactionsPerBatch: Int
    /// Decides a property this store changed (not pushed yet) and another writer changed too:
    /// given the conflict, returns the value to keep, or nil for the rule's (the store's). The
    /// value chosen is committed as a store transaction of its own right after the pull and
    /// pushed like any change; should the replicator stop in between, the rule's value stands.
    public let resolveConflict: (@Sendable (ReplicationConflict) -> StoredValue?)?
    /// The store's history token when this replicator's last pull began.
    let lastPull = Mutex<HistoryToken?>(nil)
    /// Called by a pull just before the store transaction that applies what it read (tests
    /// commit to the store there, to check the pull sees what the store did meanwhile).
    package let beforeApplying = Mutex<(@Sendable () throws -> Void)?>(nil)
    /// Called by ``leave()`` inside the transaction that retires the store, before it checks
    /// that the store committed nothing since its last push (tests commit there).
    package let beforeRetiring = Mutex<(@Sendable () throws -> Void)?>(nil)
    /// A batch stops growing at this many changes, which bounds its memory.
    static let changesPerBatch = 50_000

    /// A replicator of `store` to `destination`, its state kept under `name`.
    ///
    /// Consecutive Strata transactions waiting to be pushed are applied together, up to
    /// `transactionsPerBatch` in one PostgreSQL transaction: PostgreSQL then passes from the
    /// state of one Strata commit to that of a later one, never showing part of a Strata
    /// transaction, and a thousand small transactions cost a few statements instead of
    /// thousands of round trips. With `transactionsPerBatch: 1`, PostgreSQL goes through every
    /// state the store went through, at the cost of a round trip per statement of each.
    ///
    /// `resolveConflict` decides the conflicts a pull finds instead of the rule (see
    /// ``resolveConflict``).
    public init(store: RecordStore, destination: PostgresDestination, name: String = "default",
                transactionsPerBatch: Int = 1_000,
                resolveConflict: (@Sendable (ReplicationConflict) -> StoredValue?)? = nil) {
        self.resolveConflict = resolveConflict
        self.store = store
        self.destination = destination
        self.name = name
        self.transactionsPerBatch = max(1, transactionsPerBatch)
        self.schema = ReplicationSchema(model: store.model)
    }

    /// The store's model text, kept with the token: a later run with another model is refused.
    var modelText: String { store.model.schemaLines.joined(separator: "\n") }

    // MARK: Pushing

    /// Applies every transaction PostgreSQL does not hold yet and returns what it did. The first
    /// push (and one after the history it needed was purged) fills the tables from a snapshot
    /// of the store instead, in one PostgreSQL transaction, and goes on from that snapshot's token.
    ///
    /// Throws ``ReplicationError`` (the URL, the login, a table in the way, the connection
    /// dropping: what was applied stays applied, the rest is applied by the next push) and the
    /// store's errors.
    public func push() async throws -> PushReport {
        let connection = try await connect()
        defer { connection.close() }
        return try await push(on: connection, stopAfter: nil)
    }

    /// Pushes, then waits for the store's next commit (woken by it, not polling) and pushes
    /// again, until the task is cancelled or `stop` returns true (asked after each push with
    /// what it did). With `pulling`, each round pulls first (see ``pull()``), and a change a
    /// server application makes in PostgreSQL wakes it too (`LISTEN`/`NOTIFY`); `pulled` is
    /// told what each pull did. A dropped connection is reconnected after a pause, up to
    /// `retries` times in a row before the error is thrown; so is a store that is locked or
    /// fails a write (`StrataError.locked`, `.ioFailure`, `.diskFull`).
    public func follow(pulling: Bool = false, retries: Int = 10, stop: @Sendable (PushReport) -> Bool = { _ in false },
                       pulled: @Sendable (PullReport) -> Void = { _ in }) async throws {
        var failures = 0
        while !Task.isCancelled {
            do {
                let connection = try await connect()
                defer { connection.close() }
                // The count starts again after a round that worked, not after a connect: a
                // server that accepts connections and drops each one still runs out of retries.
                if try await followRounds(on: connection, pulling: pulling, pulled: pulled, stop: stop,
                                          roundDone: { failures = 0 }) { return }
            } catch let error as ReplicationError {
                guard case .connectionFailed = error, failures < retries else { throw error }
                failures += 1
                try await Task.sleep(for: .milliseconds(200 * failures))
            } catch let error as StrataError {
                // The store's passing troubles (its lock held, a failed write, a full disk) are
                // waited out like a dropped connection; the others end the follow.
                switch error {
                case .locked, .ioFailure, .diskFull:
                    guard failures < retries else { throw error }
                    failures += 1
                    try await Task.sleep(for: .milliseconds(200 * failures))
                default:
                    throw error
                }
            }
        }
    }

    /// Rounds of ``follow(pulling:retries:stop:pulled:)`` on one connection, each started by a
    /// wake-up: the store's commits and, when pulling, PostgreSQL's notifications. Returns
    /// true when `stop` did.
    private func followRounds(on connection: PostgresConnection, pulling: Bool, pulled: @Sendable (PullReport) -> Void,
                              stop: @Sendable (PushReport) -> Bool, roundDone: () -> Void) async throws -> Bool {
        // One pending wake-up is enough: a round takes everything there is.
        let (wakeUps, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            if pulling {
                try await preparePull(on: connection)
                // Notifications on a connection of their own: waiting for them holds it.
                let listener = try await connect()
                group.addTask {
                    defer { listener.close() }
                    do {
                        // Once listening, a change made before the LISTEN took effect is in
                        // the change table, and the round this wakes takes it.
                        try await listener.listen(on: ReplicationSchema.channel, listening: { wake.yield() },
                                                  notified: { wake.yield() })
                    } catch {
                        // The wake-ups end, and the loop below finds this error in the group.
                        wake.finish()
                        throw self.translate(error)
                    }
                }
            }
            let store = self.store
            var seen = store.lastCommitID
            group.addTask {
                while !Task.isCancelled {
                    if let next = try await store.waitForCommit(after: seen, timeout: .seconds(1)) {
                        seen = next
                        wake.yield()
                    }
                }
            }
            if !pulling { try await prepareTables(on: connection) }
            wake.yield()
            defer { group.cancelAll() }
            for await _ in wakeUps {
                if pulling { pulled(try await pull(on: connection, tablesChecked: true)) }
                let pushed = try await push(on: connection, stopAfter: nil, tablesChecked: true)
                roundDone()
                if stop(pushed) { return true }
                if Task.isCancelled { break }
            }
            // The wake-ups ended (a listener failed) or the task was cancelled: a listener's
            // error is thrown from here.
            group.cancelAll()
            while try await group.next() != nil {}
            return false
        }
    }

    /// Pushes on an open connection; with `stopAfter`, at most that many transactions.
    /// `tablesChecked`: this connection already checked the tables (a follower checks once:
    /// nine round trips, a few milliseconds of the server's time per push).
    func push(on connection: PostgresConnection, stopAfter limit: Int?, tablesChecked: Bool = false) async throws
        -> PushReport {
        let started = ContinuousClock.now
        var report = PushReport()
        if !tablesChecked { try await prepareTables(on: connection) }
        var token: HistoryToken
        if let stored = try await storedToken(on: connection) {
            token = stored
        } else if try await join(on: connection).joinedOthers {
            // It joined stores already there: it takes their rows, never empties the tables.
            token = try await bootstrap(on: connection, report: &report)
        } else {
            token = try await copyAll(on: connection, report: &report)
        }
        var lastDate: Date?
        // The batch read while PostgreSQL applied the one before, and the token it follows.
        var prefetched: (after: HistoryToken, batch: (transactions: [HistoryTransaction], purged: Bool), prepared: Prepared?)?
        while true {
            let room = limit.map { $0 - report.transactions }
            let ahead = prefetched.flatMap { $0.after == token ? $0 : nil }
            let (pending, purged) = try ahead?.batch ?? nextBatch(after: token, room: room)
            prefetched = nil
            guard let last = pending.last else {
                if purged {
                    guard try await !join(on: connection).hasOtherStores else {
                        throw ReplicationError.joinRefused(
                            name: name, reason: "the history this store has not pushed yet was purged, and other "
                                + "stores write to the dataset: copying this store over theirs would lose their rows")
                    }
                    token = try await copyAll(on: connection, report: &report)
                    continue
                }
                break
            }
            // While PostgreSQL applies this batch, the next one is read from the store and its statements written: the two
            // sides work at once instead of taking turns (decision 114). A read that fails is
            // made again, and throws, when its turn comes.
            let expected = token
            async let applied = apply(pending, after: expected, on: connection, prepared: ahead?.prepared)
            let nextRoom = room.map { $0 - pending.count }
            let next = nextRoom.map { $0 > 0 } ?? true ? try? nextBatch(after: last.token, room: nextRoom) : nil
            let nextPrepared = next.flatMap { try? prepare($0.transactions) }
            do {
                let batch = try await applied
                report.transactions += batch.transactions
                report.changes += batch.changes
                report.rows += batch.rows
                report.batches += batch.batches
                report.retries += batch.retries
            } catch is TokenMoved {
                // Moved ahead by another run over the same history — most often this one's
                // own last batch, committed by the server after the connection that sent it
                // dropped: carry on from there.
                guard let stored = try await storedToken(on: connection), stored.value > token.value else {
                    throw ReplicationError.server(
                        message: "the token of replication '\(name)' in PostgreSQL went back past \(token)", sqlState: nil)
                }
                token = stored
                continue
            }
            token = last.token
            lastDate = last.date
            if let next { prefetched = (last.token, next, nextPrepared) }
            if let limit, report.transactions >= limit { break }
        }
        report.token = token
        let (seconds, attoseconds) = (ContinuousClock.now - started).components
        report.seconds = Double(seconds) + Double(attoseconds) / 1e18
        report.lagSeconds = lastDate.map { Date().timeIntervalSince($0) }
        return report
    }

    /// The token was not where a batch expected it: nothing of the batch was applied.
    struct TokenMoved: Error {}

    /// A batch: the transactions after `token`, as many as ``transactionsPerBatch`` and
    /// ``changesPerBatch`` allow and at most `room` (no bound when nil); `purged` when the
    /// history after `token` was purged.
    private func nextBatch(after token: HistoryToken, room: Int?) throws
        -> (transactions: [HistoryTransaction], purged: Bool) {
        var pending: [HistoryTransaction] = []
        var pendingChanges = 0
        while pending.count < transactionsPerBatch, pendingChanges < Self.changesPerBatch {
            let wanted = min(transactionsPerBatch - pending.count, 256, room.map { $0 - pending.count } ?? .max)
            guard wanted > 0 else { break }
            let page: [HistoryTransaction]
            do {
                page = try store.history(after: pending.last?.token ?? token, limit: wanted)
            } catch StrataError.historyPurged {
                return (pending, true)
            }
            if page.isEmpty { break }
            pending += page
            pendingChanges += page.reduce(0) { $0 + $1.changes.count }
        }
        return (pending, false)
    }

    /// Applies a batch (see ``apply(_:after:on:report:prepared:)``) and returns what it did.
    func apply(_ transactions: [HistoryTransaction], after expected: HistoryToken, on connection: PostgresConnection,
               prepared: Prepared?) async throws -> PushReport {
        var report = PushReport()
        try await apply(transactions, after: expected, on: connection, report: &report, prepared: prepared)
        return report
    }

    /// Consecutive Strata transactions as one PostgreSQL transaction, the token moved in it from
    /// `expected` to the last one's (``TokenMoved`` if another run moved it first).
    func apply(_ transactions: [HistoryTransaction], after expected: HistoryToken, on connection: PostgresConnection,
               report: inout PushReport, prepared: Prepared? = nil) async throws {
        var attempt = 0
        while true {
            do {
                return try await applyChecked(transactions, after: expected, on: connection, report: &report,
                                              prepared: prepared)
            } catch ReplicationError.server(_, let state) where (state == "40P01" || state == "40001") && attempt < 5 {
                // Deadlocked with another store's push (both writing derived columns of the same
                // parents, in different orders) or a serialization failure: the batch rolled
                // back whole; again, after a pause that grows.
                attempt += 1
                report.retries += 1
                try await Task.sleep(for: .milliseconds(10 * attempt))
            }
        }
    }

    private func applyChecked(_ transactions: [HistoryTransaction], after expected: HistoryToken,
                              on connection: PostgresConnection, report: inout PushReport, prepared: Prepared?) async throws {
        do {
            try await apply(transactions, after: expected, on: connection, report: &report, guarded: false,
                            prepared: prepared)
        } catch ReplicationError.server(_, let state) where state == "23503" {
            // A foreign key failed at commit: a row the batch points at was deleted by a server
            // application since the store's change (the pull that follows applies the deletion).
            // Again, with the statements that leave such references out as ON DELETE would have;
            // not at first, as they cost a round trip per batch that is rarely needed.
            try await apply(transactions, after: expected, on: connection, report: &report, guarded: true, prepared: nil)
        }
    }

    /// A batch's statements written ahead (unguarded), and the changes they hold.
    struct Prepared: Sendable {
        var queries: [PostgresQuery]
        var rows: Int
        var changes: Int
    }

    /// The statements of `transactions`, written before their turn, or nil when one of them
    /// applied a pull (its statements depend on what PostgreSQL says when its turn comes).
    func prepare(_ transactions: [HistoryTransaction]) throws -> Prepared? {
        guard !transactions.contains(where: { pullClaim(of: $0) != nil }) else { return nil }
        var batch = BatchStatements(schema: schema)
        var changes = 0
        for transaction in transactions {
            batch.add(transaction.changes)
            changes += transaction.changes.count
        }
        let (queries, rows) = try batch.statements()
        return Prepared(queries: queries, rows: rows, changes: changes)
    }

    private func apply(_ transactions: [HistoryTransaction], after expected: HistoryToken,
                       on connection: PostgresConnection, report: inout PushReport, guarded: Bool,
                       prepared: Prepared?) async throws {
        // The store transactions of this replication's pulls carry what the store computed
        // from the server's writes, not those writes (``ServerWrites``); their claims end here.
        let claims = transactions.compactMap { pullClaim(of: $0) }
        let queries: [PostgresQuery], rows: Int, changes: Int
        if let prepared, !guarded, claims.isEmpty {
            (queries, rows, changes) = (prepared.queries, prepared.rows, prepared.changes)
        } else {
            var batch = BatchStatements(schema: schema, guardsMissingRows: guarded)
            var counted = 0
            let writes = claims.isEmpty ? [:] : try await serverWrites(of: claims, on: connection)
            for transaction in transactions {
                if let claim = pullClaim(of: transaction), let server = writes[claim] {
                    batch.add(transaction.changes, leavingOut: server)
                    batch.add(try derivedValues(of: server.derivedRewrites))
                } else {
                    batch.add(transaction.changes)
                }
                counted += transaction.changes.count
            }
            (queries, rows) = try batch.statements()
            changes = counted
        }
        try await inTransaction(on: connection) {
            for query in queries { try await $0.query(query) }
            if !claims.isEmpty { try await endClaims(claims, on: $0) }
            var bindings = PostgresBindings()
            bindings.append(Int64(bitPattern: transactions.last!.token.value))
            bindings.append(name)
            bindings.append(Int64(bitPattern: expected.value))
            let moved = try await $0.query(PostgresQuery(
                unsafeSQL: "UPDATE \(SQL.name(ReplicationSchema.stateTable)) SET token = $1 "
                    + "WHERE name = $2 AND token = $3 RETURNING token", binds: bindings))
            guard moved.count == 1 else { throw TokenMoved() }
        }
        report.transactions += transactions.count
        report.changes += changes
        report.rows += rows
        report.batches += 1
    }

    // MARK: Connecting

    /// A connection to ``destination``, its errors as ``ReplicationError``.
    func connect() async throws -> PostgresConnection {
        let connection = try await PostgresConnection.connect(to: destination)
        do {
            // The replicator's writes carry this mark, and the pull's triggers skip them: what
            // the store sent is not sent back.
            try await connection.query(PostgresQuery(
                unsafeSQL: "SELECT set_config(\(SQL.literal(ReplicationSchema.originSetting)), 'strata', false), "
                    // The server's notices and warnings ("relation … already exists, skipping", a
                    // ROLLBACK after a failed COMMIT) are not for whoever runs the replicator:
                    // its errors come back as ``ReplicationError``.
                    + "set_config('client_min_messages', 'error', false)"))
            return connection
        } catch {
            connection.close()
            throw translate(error)
        }
    }

    /// Runs `body` between `BEGIN` and `COMMIT` (`ROLLBACK` if it throws), with PostgreSQL's
    /// errors turned into ``ReplicationError``.
    func inTransaction(on connection: PostgresConnection, begin: String = "BEGIN",
                       _ body: (PostgresConnection) async throws -> Void) async throws {
        try await run(on: connection) { connection in
            try await connection.query(PostgresQuery(unsafeSQL: begin))
            do {
                try await body(connection)
                try await connection.query("COMMIT")
            } catch {
                _ = try? await connection.query("ROLLBACK")
                throw error
            }
        }
    }

    /// Runs `body` with PostgreSQL's errors turned into ``ReplicationError``; the store's own
    /// errors (`StrataError`) go through as they are.
    func run<T>(on connection: PostgresConnection, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        do {
            return try await body(connection)
        } catch let error as ReplicationError {
            throw error
        } catch let error as StrataError {
            throw error
        } catch let error as TokenMoved {
            throw error
        } catch {
            throw translate(error)
        }
    }

    /// A ``ReplicationError`` for an error of the connection or of reading a result: never the
    /// query's text or parameters (values and, in a URL, the password have no place in an error).
    func translate(_ error: any Error) -> ReplicationError {
        if let error = error as? ReplicationError { return error }
        if let error = error as? PostgresDecodingError {
            return .server(message: "a result could not be read: \(error)", sqlState: nil)
        }
        return .connectionFailed(reason: "\(error)")
    }
}
