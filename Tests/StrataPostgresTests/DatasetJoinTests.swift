import Foundation
import StrataPostgres
import StrataRecords
import StrataStorage
import StrataTesting
import Testing

/// Several stores replicating into one dataset (decision 110): the store that creates it keeps
/// its keys' range, a store that joins comes empty, takes another range and the dataset's rows,
/// and no push of either empties the tables or gives two rows one key; a store holding rows of
/// its own is refused instead of copying them over the others'.
@Suite(.serialized) struct DatasetJoinTests {
    let cluster: PostgresCluster
    let directory: String

    init() throws {
        cluster = try PostgresCluster.shared
        directory = NSTemporaryDirectory() + "strata-join-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func makeStore(_ file: String) throws -> RecordStore {
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared
        return try RecordStore(path: directory + "/\(file).strata", model: try todoModel(), options: options, history: .on)
    }

    func replicator(_ store: RecordStore, _ url: String, name: String) throws -> PostgresReplicator {
        PostgresReplicator(store: store, destination: try PostgresDestination(url: url, environment: ["PGPASSWORD": cluster.password]),
                           name: name)
    }

    func register(_ database: String) throws -> [String] {
        try cluster.psql("SELECT number || ':' || name FROM strata_replicas ORDER BY number", database: database)
            .split(separator: "\n").map(String.init)
    }

    @Test func aStoreJoiningTakesItsOwnRangeAndTheDatasetsRows() async throws {
        let (database, url) = try cluster.makeDatabase()
        let first = try makeStore("first")
        defer { try? first.close() }
        let (lists, _) = try ReplicationTests.fill(first)
        let one = try replicator(first, url, name: "first")
        #expect(try await one.push().copiedAll)
        #expect(try register(database) == ["0:first"])

        // An empty store joins: range 1, and a copy of what PostgreSQL holds, keys kept.
        let second = try makeStore("second")
        defer { try? second.close() }
        let two = try replicator(second, url, name: "second")
        let joined = try await two.push()
        #expect(joined.copiedAll && joined.transactions == 0, "\(joined)")
        #expect(try register(database) == ["0:first", "1:second"])
        #expect(try second.read { try $0.keyRange() }.number == 1)
        let expected = try ReplicatedContent.ofStore(first)
        let copied = try ReplicatedContent.ofStore(second)
        #expect(copied == expected, "\(ReplicatedContent.difference(copied, expected))")
        #expect(try second.read { try $0.checkRecords() } == [])
        // Its copy is not pushed back.
        #expect(try await two.push().transactions == 0)

        // Each store's new rows take keys of its own range; neither push empties the tables.
        let mine = try await second.write { tx in
            let list = try tx.insert("TodoList", ["name": "Second's"])
            try tx.insert("Item", ["title": "From second", "list": lists[0]])
            return list
        }
        #expect(mine.primaryKey == 1 << 40)
        let theirs = try await first.write { tx in try tx.insert("TodoList", ["name": "First's"]) }
        #expect(theirs.primaryKey < 1 << 40)
        #expect(try await two.push().transactions == 1)
        #expect(try await one.push().transactions == 1)
        let lines = try cluster.psql("SELECT pk FROM \"TodoList\" ORDER BY pk", database: database)
            .split(separator: "\n").compactMap { UInt64($0) }
        #expect(lines.contains(mine.primaryKey) && lines.contains(theirs.primaryKey) && lines.count == lists.count + 2)
        #expect(try cluster.psql("SELECT count(*) FROM \"Item\" WHERE title = 'From second'", database: database)
            .trimmingCharacters(in: .whitespacesAndNewlines) == "1")

        // A store that holds rows of its own cannot join: its keys are range 0's too.
        let third = try makeStore("third")
        defer { try? third.close() }
        _ = try ReplicationTests.fill(third)
        await #expect(throws: ReplicationError.self) { _ = try await replicator(third, url, name: "third").push() }
        do {
            _ = try await replicator(third, url, name: "third").push()
        } catch let error as ReplicationError {
            guard case .joinRefused(let name, let reason) = error else { Issue.record("\(error)"); return }
            #expect(name == "third" && reason.contains("rows of its own"), "\(reason)")
        }
        #expect(try register(database) == ["0:first", "1:second"])
        #expect(try cluster.psql("SELECT count(*) FROM \"TodoList\"", database: database)
            .trimmingCharacters(in: .whitespacesAndNewlines) == String(lists.count + 2))
        #expect(try third.read { try $0.keyRange() }.number == 0)
    }

    /// A dataset made before the register (a `strata_replication` row and no `strata_replicas`
    /// row): its store is registered with range 0, where its keys are, and the next store joins.
    @Test func aReplicationMadeBeforeTheRegisterKeepsRangeZero() async throws {
        let (database, url) = try cluster.makeDatabase()
        let first = try makeStore("old")
        defer { try? first.close() }
        _ = try ReplicationTests.fill(first)
        _ = try await replicator(first, url, name: "old").push()
        _ = try cluster.psql("DELETE FROM strata_replicas", database: database)
        let joining = try makeStore("new")
        defer { try? joining.close() }
        _ = try await replicator(joining, url, name: "new").push()
        #expect(try register(database) == ["0:old", "1:new"])
        #expect(try ReplicatedContent.ofStore(joining) == ReplicatedContent.ofStore(first))
        try await first.write { tx in _ = try tx.insert("Tag", ["label": "after"]) }
        #expect(try await replicator(first, url, name: "old").push().transactions == 1)
        #expect(try first.read { try $0.keyRange() }.number == 0)
    }
}
