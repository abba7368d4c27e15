import Foundation
import StrataPostgres
import StrataRecords
import StrataStorage
import StrataTesting
import Testing

/// Replication to a real PostgreSQL server (a throwaway cluster, ``PostgresCluster``): the
/// store's model as tables, a first push that copies, later pushes that apply each transaction
/// once, and what each bad input does.
@Suite(.serialized) struct ReplicationTests {
    let cluster: PostgresCluster
    let directory: String

    init() throws {
        cluster = try PostgresCluster.shared
        directory = NSTemporaryDirectory() + "strata-replicate-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func makeStore() throws -> RecordStore {
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared
        return try RecordStore(path: directory + "/todo.strata", model: try todoModel(), options: options, history: .on)
    }

    func destination(_ url: String, tls: String? = nil) throws -> PostgresDestination {
        try PostgresDestination(url: url + (tls.map { "?\($0)" } ?? ""), environment: ["PGPASSWORD": cluster.password])
    }

    /// Lists, items, tags linked to lists: every kind of row and change.
    static func fill(_ store: RecordStore) throws -> (lists: [ObjectID], tags: [ObjectID]) {
        try store.write { tx in
            let lists = try (0..<3).map { try tx.insert("TodoList", ["name": "List \($0)"]) }
            let tags = try (0..<2).map { try tx.insert("Tag", ["label": "tag \($0)"]) }
            for index in 0..<12 {
                let item = try tx.insert("Item", ["title": "Item \(index)", "amount": Decimal(index) / 4,
                                                  "quantity": Int32(index % 3 + 1)])
                try tx.set("list", of: item, to: lists[index % 3])
            }
            try tx.add(lists[0], to: "lists", of: tags[0])
            try tx.add(lists[1], to: "lists", of: tags[0])
            return (lists, tags)
        }
    }

    @Test func theFirstPushCopiesThenEachTransactionIsAppliedOnce() async throws {
        let (database, url) = try cluster.makeDatabase()
        let store = try makeStore()
        defer { try? store.close() }
        let (lists, tags) = try Self.fill(store)
        let replicator = PostgresReplicator(store: store, destination: try destination(url))
        let first = try await replicator.push()
        #expect(first.copiedAll && first.transactions == 0 && first.rows > 12)
        #expect(try ReplicatedContent.ofDatabase(database, in: cluster, model: store.model) == ReplicatedContent.ofStore(store))

        // Updates, a move, a cascade delete, links made and broken, derived values moving.
        let items = try store.read { try $0.objects("Item") }
        try await store.write { tx in try tx.update(items[0], ["title": "Renamed", "amount": Decimal(7)]) }
        try await store.write { tx in try tx.set("list", of: items[1], to: lists[2]) }
        try await store.write { tx in
            try tx.add(lists[2], to: "lists", of: tags[1])
            try tx.remove(lists[0], from: "lists", of: tags[0])
        }
        try await store.write { tx in try tx.delete(lists[1]) }
        let second = try await replicator.push()
        #expect(!second.copiedAll && second.transactions == 4, "\(second)")
        #expect(try ReplicatedContent.ofDatabase(database, in: cluster, model: store.model) == ReplicatedContent.ofStore(store))
        #expect(try cluster.psql("SELECT token FROM strata_replication WHERE name = 'default'", database: database)
            .trimmingCharacters(in: .whitespacesAndNewlines) == String(second.token.value))
        let third = try await replicator.push()
        #expect(third.transactions == 0 && third.rows == 0)
    }

    /// Two replicators of one store under one name, pushing at once (or a batch a dropped
    /// connection had sent, committed by the server after the drop): whoever finds the token
    /// moved ahead carries on from there, and everything is applied once.
    @Test func twoPushesAtOnceApplyEverythingOnce() async throws {
        let (database, url) = try cluster.makeDatabase()
        let store = try makeStore()
        defer { try? store.close() }
        let (lists, _) = try Self.fill(store)
        let first = PostgresReplicator(store: store, destination: try destination(url), transactionsPerBatch: 3)
        let second = PostgresReplicator(store: store, destination: try destination(url), transactionsPerBatch: 3)
        _ = try await first.push()
        for index in 0..<200 {
            try await store.write { tx in
                let item = try tx.insert("Item", ["title": "Concurrent \(index)"])
                try tx.set("list", of: item, to: lists[index % lists.count])
            }
        }
        async let one = first.push()
        async let two = second.push()
        let (a, b) = try await (one, two)
        #expect(a.transactions + b.transactions == 200, "\(a) \(b)")
        #expect(try ReplicatedContent.ofDatabase(database, in: cluster, model: store.model) == ReplicatedContent.ofStore(store))
        #expect(try cluster.psql("SELECT token FROM strata_replication", database: database)
            .trimmingCharacters(in: .whitespacesAndNewlines) == String(try store.lastHistoryToken().value))
    }

    @Test func badInputIsAClearErrorAndWritesNothing() async throws {
        let (database, url) = try cluster.makeDatabase()
        let store = try makeStore()
        defer { try? store.close() }
        _ = try Self.fill(store)
        for bad in ["http://x@h/db", "postgres://h/db", "postgres://u@/db", "postgres://u@h", "postgres://u@h/db?sslmode=maybe",
                    "postgres://u@h:99999/db", "not a url at all"] {
            #expect(throws: ReplicationError.self, "\(bad)") { try PostgresDestination(url: bad, environment: [:]) }
        }
        // A wrong password: refused, and the password appears nowhere in the error.
        let wrong = try PostgresDestination(url: url, environment: ["PGPASSWORD": "not-the-password"])
        do {
            _ = try await PostgresReplicator(store: store, destination: wrong).push()
            Issue.record("a wrong password was accepted")
        } catch ReplicationError.loginRefused(let user, _, _) {
            #expect(user == cluster.user)
        } catch {
            Issue.record("expected loginRefused, got \(error)")
        }
        // No server there.
        let nowhere = try PostgresDestination(url: "postgres://u@127.0.0.1:1/db", environment: [:])
        await #expect(throws: ReplicationError.self) { _ = try await PostgresReplicator(store: store, destination: nowhere).push() }
        // A table in the way: nothing is created or written.
        try cluster.psql("CREATE TABLE \"Item\" (id integer, title varchar(10))", database: database)
        do {
            _ = try await PostgresReplicator(store: store, destination: try destination(url)).push()
            Issue.record("a table of another shape was used")
        } catch ReplicationError.tableInTheWay(let table, _) {
            #expect(table == "Item")
        }
        let tables = try cluster.psql("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
                                      database: database)
        #expect(tables.trimmingCharacters(in: .whitespacesAndNewlines) == "1")
    }

    @Test func passwordsComeFromTheURLTheEnvironmentOrThePasswordFile() throws {
        let fromURL = try PostgresDestination(url: "postgres://ann:pw1@db.example:6543/app", environment: ["PGPASSWORD": "pw2"])
        #expect(fromURL.password == "pw1" && fromURL.port == 6543 && fromURL.database == "app")
        #expect(!fromURL.description.contains("pw1"))
        let fromEnvironment = try PostgresDestination(url: "postgres://ann@db.example/app", environment: ["PGPASSWORD": "pw2"])
        #expect(fromEnvironment.password == "pw2")
        let file = directory + "/pgpass"
        try "# comment\nother:*:*:*:nope\ndb.example:5432:app:ann:pw\\:3\n".write(toFile: file, atomically: true, encoding: .utf8)
        let fromFile = try PostgresDestination(url: "postgres://ann@db.example/app", environment: ["PGPASSFILE": file])
        #expect(fromFile.password == "pw:3")
        #expect(try PostgresDestination(url: "postgres://bob@db.example/app", environment: ["PGPASSFILE": file]).password == nil)
    }

    @Test func tlsRequireAndVerifyFull() async throws {
        let (database, url) = try cluster.makeDatabase()
        let store = try makeStore()
        defer { try? store.close() }
        _ = try Self.fill(store)
        let required = try await PostgresReplicator(store: store, destination: try destination(url, tls: "sslmode=require")).push()
        #expect(required.copiedAll)
        // verify-full: the server's certificate names localhost and is its own authority.
        let verified = url.replacingOccurrences(of: "127.0.0.1", with: "localhost")
        let report = try await PostgresReplicator(
            store: store, destination: try destination(verified, tls: "sslmode=verify-full&sslrootcert=\(cluster.certificatePath)")).push()
        #expect(report.transactions == 0)
        // Without the authority, the certificate is not trusted: an error, no trap.
        await #expect(throws: ReplicationError.self) {
            _ = try await PostgresReplicator(store: store, destination: try destination(verified, tls: "sslmode=verify-full")).push()
        }
        #expect(try ReplicatedContent.ofDatabase(database, in: cluster, model: store.model) == ReplicatedContent.ofStore(store))
        let ssl = try cluster.psql("SELECT count(*) FROM pg_stat_ssl WHERE ssl", database: database)
        #expect(!ssl.isEmpty)
    }
}
