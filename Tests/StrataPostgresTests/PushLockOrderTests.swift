import Foundation
@testable import StrataPostgres
import StrataRecords
import StrataStorage
import StrataTesting
import Testing

/// Pushes of several stores that write the same rows take their locks in one order (decision
/// 113): two pushes never deadlock, which PostgreSQL would find only after `deadlock_timeout`
/// (a second by default) and end by rolling one back.
@Suite(.serialized) struct PushLockOrderTests {
    let cluster: PostgresCluster
    let directory: String

    init() throws {
        cluster = try PostgresCluster.shared
        directory = NSTemporaryDirectory() + "strata-lock-order-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func makeStore(_ file: String) throws -> RecordStore {
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared
        return try RecordStore(path: directory + "/\(file).strata", model: try todoModel(), options: options, history: .on)
    }

    /// Sessions of `database` waiting for a row lock.
    func waiting(_ database: String) throws -> Int {
        Int(try cluster.psql("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                             + "AND wait_event_type = 'Lock'", database: database)
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    func waitUntil(_ database: String, waiting count: Int) async throws {
        for _ in 0..<2_000 {
            if try waiting(database) >= count { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("\(count) sessions never waited for a lock")
    }

    /// Store B renames two lists in key order, store A in the other order, while a third session
    /// holds the first list. B's push queues for it, then A's. Written in the order each store
    /// touched its rows, A's push would lock the second list and wait for the first, and once
    /// the session lets go B would hold the first and wait for the second: a deadlock. Locked in
    /// key order, A waits for the first list holding nothing, and the pushes go one after the
    /// other.
    @Test func pushesWritingTheSameRowsInOppositeOrdersDoNotDeadlock() async throws {
        let (database, url) = try cluster.makeDatabase()
        let destination = try PostgresDestination(url: url, environment: ["PGPASSWORD": cluster.password])
        let a = try makeStore("a")
        defer { try? a.close() }
        _ = try ReplicationTests.fill(a)
        let one = PostgresReplicator(store: a, destination: destination, name: "a")
        _ = try await one.exchange()
        let b = try makeStore("b")
        defer { try? b.close() }
        let two = PostgresReplicator(store: b, destination: destination, name: "b")
        _ = try await two.exchange()
        let lists = try a.read { try $0.objects("TodoList") }.sorted { $0.primaryKey < $1.primaryKey }
        let (first, second) = (lists[0], lists[1])
        try await a.write { tx in
            try tx.update(second, ["name": "A's second"])
            try tx.update(first, ["name": "A's first"])
        }
        try await b.write { tx in
            try tx.update(first, ["name": "B's first"])
            try tx.update(second, ["name": "B's second"])
        }

        let holder = try await PostgresConnection.connect(to: destination)
        defer { holder.close() }
        try await holder.query("BEGIN")
        try await holder.query(PostgresQuery(unsafeSQL: "SELECT 1 FROM \"TodoList\" WHERE pk = \(first.primaryKey) FOR UPDATE"))
        let pushB = Task { try await two.push() }
        try await waitUntil(database, waiting: 1)
        let pushA = Task { try await one.push() }
        try await waitUntil(database, waiting: 2)
        try await holder.query("COMMIT")
        let (byB, byA) = (try await pushB.value, try await pushA.value)
        #expect(byB.retries == 0 && byA.retries == 0, "B's push retried \(byB.retries), A's \(byA.retries)")
        #expect(byB.transactions == 1 && byA.transactions == 1)
        // A pushed last: its names are PostgreSQL's.
        let names = try cluster.psql("SELECT name FROM \"TodoList\" WHERE pk IN (\(first.primaryKey), \(second.primaryKey)) "
                                     + "ORDER BY pk", database: database)
        #expect(names.split(separator: "\n") == ["A's first", "A's second"])
    }

    /// A store that pulls another's change recomputes the derived values the other already
    /// pushed: its push writes nothing where PostgreSQL holds those values (the row keeps its
    /// version, so it was neither locked nor rewritten), and does write a value that differs.
    @Test func anUpdateOfValuesPostgreSQLHoldsWritesNothing() async throws {
        let (database, url) = try cluster.makeDatabase()
        let destination = try PostgresDestination(url: url, environment: ["PGPASSWORD": cluster.password])
        let a = try makeStore("a")
        defer { try? a.close() }
        let (lists, _) = try ReplicationTests.fill(a)
        let one = PostgresReplicator(store: a, destination: destination, name: "a")
        _ = try await one.exchange()
        let b = try makeStore("b")
        defer { try? b.close() }
        let two = PostgresReplicator(store: b, destination: destination, name: "b")
        _ = try await two.exchange()
        func version(_ id: ObjectID) throws -> String {
            try cluster.psql("SELECT xmin FROM \"TodoList\" WHERE pk = \(id.primaryKey)", database: database)
        }
        _ = try await a.write { tx in try tx.insert("Item", ["title": "Counted", "amount": Decimal(9), "list": lists[0]]) }
        _ = try await one.exchange()
        let pushedByA = try version(lists[0])
        let exchanged = try await two.exchange()
        #expect(exchanged.pulled.rowsApplied > 0, "\(exchanged.pulled)")
        #expect(try b.read { try $0.values(of: lists[0])?["itemCount"] } == a.read { try $0.values(of: lists[0])?["itemCount"] })
        #expect(try version(lists[0]) == pushedByA, "B's push rewrote the list's derived values PostgreSQL held")
        // A value PostgreSQL does not hold is written.
        try await b.write { tx in try tx.update(lists[0], ["name": "Renamed in B"]) }
        _ = try await two.exchange()
        #expect(try version(lists[0]) != pushedByA)
        #expect(try cluster.psql("SELECT name FROM \"TodoList\" WHERE pk = \(lists[0].primaryKey)", database: database)
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "Renamed in B")
    }
}
