import Foundation
import StrataPostgres
import StrataRecords
import StrataStorage
import StrataTesting
import Testing

/// Changes on both sides at once, generated: the store commits small transactions while a
/// "server application" updates, inserts, deletes, moves and links rows in PostgreSQL (and
/// writes over derived columns); after every exchange PostgreSQL must equal the store, the
/// change table must be empty and the store must check clean — whatever conflicts the
/// generator made. Every other round the server writes again between a pull and its push.
@Suite(.serialized) struct ExchangeDifferentialTests {
    let cluster: PostgresCluster
    let directory: String

    init() throws {
        cluster = try PostgresCluster.shared
        directory = NSTemporaryDirectory() + "strata-exchange-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    @Test(arguments: [UInt64(11), 13, 15])
    func exchangesConvergeWhateverBothSidesDid(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let (database, url) = try cluster.makeDatabase()
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared
        let store = try RecordStore(path: directory + "/exchange-\(seed).strata", model: try todoModel(), options: options,
                                    history: .on)
        defer { try? store.close() }
        let replicator = PostgresReplicator(
            store: store, destination: try PostgresDestination(url: url, environment: ["PGPASSWORD": cluster.password]),
            transactionsPerBatch: [1, 5, 1_000][Int(seed % 3)])
        var lists: [ObjectID] = []
        var items: [ObjectID] = []
        var tags: [ObjectID] = []
        try ReplicationBatchingTests.commit(20, to: store, lists: &lists, items: &items, tags: &tags, random: &random)
        _ = try await replicator.exchange()
        var conflicts = 0
        for round in 0..<10 {
            // Every other round races: the server writes again between a pull and the push that
            // follows it, with the store quiet, so every write of the server must survive.
            let racing = round % 2 == 1
            // The store's side (its lists of keys go stale as the server deletes: steps on a
            // missing object are skipped by refreshing them first).
            (lists, items, tags) = try Self.keys(store)
            if !racing {
                try ReplicationBatchingTests.commit(Int.random(in: 0...6, using: &random), to: store, lists: &lists,
                                                    items: &items, tags: &tags, random: &random)
            }
            // The server's side, in one PostgreSQL transaction.
            let statements = try serverStatements(database, count: Int.random(in: 1...8, using: &random), random: &random)
            _ = try cluster.psql("BEGIN;\n" + statements.joined(separator: "\n") + "\nCOMMIT;", database: database)
            var between: [String] = []
            var expectedTitles: [String: String] = [:]
            if racing {
                let pulled = try await replicator.pull()
                conflicts += pulled.conflicts + pulled.deletionsWon
                between = try serverStatements(database, count: Int.random(in: 1...6, using: &random), random: &random)
                // Then titles the push must leave as the server wrote them: rows the pull just
                // wrote to the store are the ones a push would carry back.
                let keyed = try cluster.psql("SELECT pk FROM \"Item\" WHERE pk < \(1 << 62) ORDER BY pk", database: database)
                    .split(separator: "\n").map(String.init)
                for index in 0..<min(3, keyed.count) {
                    let pk = keyed[Int.random(in: 0..<keyed.count, using: &random)]
                    expectedTitles[pk] = "Between \(round).\(index)"
                    between.append("UPDATE \"Item\" SET title = 'Between \(round).\(index)' WHERE pk = \(pk);")
                }
                _ = try cluster.psql("BEGIN;\n" + between.joined(separator: "\n") + "\nCOMMIT;", database: database)
                _ = try await replicator.push()
            }
            let (pulled, _) = try await replicator.exchange()
            conflicts += pulled.conflicts + pulled.deletionsWon
            let (server, local) = (try ReplicatedContent.ofDatabase(database, in: cluster, model: store.model),
                                   try ReplicatedContent.ofStore(store))
            let same = server == local
            #expect(same, """
                seed \(seed) round \(round): PostgreSQL (-) differs from the store (+) after \(statements), then \(between):
                \(ReplicatedContent.difference(server, local))
                """)
            #expect(try cluster.psql("SELECT count(*) FROM strata_changes", database: database)
                .trimmingCharacters(in: .whitespacesAndNewlines) == "0")
            for (pk, title) in expectedTitles {
                let id = ObjectID(entity: "Item", primaryKey: UInt64(pk)!)
                guard let values = try store.read({ try $0.values(of: id) }) else { continue }
                #expect(values["title"] == .string(title), "seed \(seed) round \(round): the server's title of Item \(pk) was lost")
            }
            let problems = try store.read { try $0.checkRecords() }
            #expect(problems.isEmpty, "seed \(seed) round \(round): \(problems)")
            if !same || !problems.isEmpty { return }
        }
        print("seed \(seed): \(conflicts) conflicts and won deletions over 10 exchanges")
    }

    static func keys(_ store: RecordStore) throws -> ([ObjectID], [ObjectID], [ObjectID]) {
        try store.read { (try $0.objects("TodoList"), try $0.objects("Item"), try $0.objects("Tag")) }
    }

    /// Random statements of a server application, on the rows PostgreSQL holds now.
    func serverStatements(_ database: String, count: Int, random: inout SplitMix64) throws -> [String] {
        func keys(_ table: String) throws -> [String] {
            try cluster.psql("SELECT pk FROM \"\(table)\"", database: database).split(separator: "\n").map(String.init)
        }
        // Keys the statements delete leave these lists, so no later statement points at them.
        var lists = try keys("TodoList")
        var items = try keys("Item")
        let tags = try keys("Tag")
        func pick(_ keys: [String]) -> String? { keys.isEmpty ? nil : keys[Int.random(in: 0..<keys.count, using: &random)] }
        var statements: [String] = []
        for _ in 0..<count {
            let number = Int.random(in: 0..<1000, using: &random)
            switch Int.random(in: 0..<11, using: &random) {
            case 0:
                if let item = pick(items) { statements.append("UPDATE \"Item\" SET title = 'Server \(number)' WHERE pk = \(item);") }
            case 1:
                if let item = pick(items) {
                    statements.append("UPDATE \"Item\" SET amount = \(number) / 8.0, quantity = \(number % 9 + 1) WHERE pk = \(item);")
                }
            case 2:
                if let item = pick(items) {
                    let list = pick(lists).map { $0 } ?? "NULL"
                    statements.append("UPDATE \"Item\" SET list = \(Bool.random(using: &random) ? list : "NULL") WHERE pk = \(item);")
                }
            case 3:
                if let list = pick(lists) { statements.append("UPDATE \"TodoList\" SET name = 'Server list \(number)', budget = \(number) WHERE pk = \(list);") }
            case 4:
                if let item = pick(items) {
                    statements.append("DELETE FROM \"Item\" WHERE pk = \(item);")
                    items.removeAll { $0 == item }
                }
            case 5:
                if let list = pick(lists) {
                    statements.append("DELETE FROM \"TodoList\" WHERE pk = \(list);")
                    lists.removeAll { $0 == list }
                }
            case 6:
                statements.append("INSERT INTO \"TodoList\" (name, budget) VALUES ('New list \(number)', 1);")
            case 7:
                let list = pick(lists) ?? "NULL"
                statements.append("INSERT INTO \"Item\" (title, amount, quantity, list) VALUES ('New item \(number)', 2, 1, \(list));")
            case 8:
                if let tag = pick(tags), let list = pick(lists) {
                    statements.append("INSERT INTO \"Tag_lists\" VALUES (\(tag), \(list)) ON CONFLICT DO NOTHING;")
                }
            case 9:
                if let tag = pick(tags) { statements.append("DELETE FROM \"Tag_lists\" WHERE source = \(tag);") }
            default:
                if let list = pick(lists) { statements.append("UPDATE \"TodoList\" SET \"itemCount\" = -1 WHERE pk = \(list);") }
            }
        }
        return statements
    }
}
