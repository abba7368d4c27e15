import Foundation
@testable import StrataPostgres
import StrataRecords
import StrataStorage
import StrataTesting
import Testing

/// The statements a push writes a batch with (decisions 113 and 114): the same text whatever
/// the order of the batch's changes, the rows it updates locked first in key order, one array
/// parameter a column, and a row of parameters each only where a value is not of its column's
/// type.
@Suite(.serialized) struct BatchStatementsTests {
    let cluster: PostgresCluster
    let directory: String

    init() throws {
        cluster = try PostgresCluster.shared
        directory = NSTemporaryDirectory() + "strata-batch-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    static func changes(seed: UInt64) -> [HistoryChange] {
        var random = SplitMix64(seed: seed)
        var changes: [HistoryChange] = []
        for pk in 1...40 as ClosedRange<UInt64> {
            let id = ObjectID(entity: "Item", primaryKey: pk)
            switch random.next() % 4 {
            case 0: changes.append(HistoryChange(kind: .update, id: id, values: ["title": .string("T\(pk)")]))
            case 1: changes.append(HistoryChange(kind: .update, id: id, values: ["quantity": .int(Int64(pk))]))
            case 2: changes.append(HistoryChange(kind: .delete, id: id))
            default: changes.append(HistoryChange(kind: .insert, id: id, values: ["title": .string("New \(pk)"),
                                                                                 "amount": .decimal(Decimal(pk) / 8)]))
            }
        }
        return changes
    }

    /// The changes of one batch in any order: the same statements, the same parameters; the
    /// first statement locks the deleted and then the updated rows of each table by key.
    @Test(arguments: [1, 2, 3] as [UInt64]) func aBatchIsTheSameWhateverTheOrderOfItsChanges(seed: UInt64) throws {
        let schema = ReplicationSchema(model: try todoModel())
        let changes = Self.changes(seed: seed)
        func statements(_ changes: [HistoryChange]) throws -> [String] {
            var batch = BatchStatements(schema: schema)
            batch.add(changes)
            return try batch.statements().queries.map { "\($0.sql) \($0.bindings.bytes)" }
        }
        let expected = try statements(changes)
        var random = SplitMix64(seed: seed &+ 100)
        for _ in 0..<5 {
            var shuffled = changes
            for index in shuffled.indices.reversed() where index > 0 {
                shuffled.swapAt(index, Int(random.next() % UInt64(index + 1)))
            }
            #expect(try statements(shuffled) == expected, "seed \(seed)")
        }
        let first = try #require(expected.first)
        #expect(first.hasPrefix("SELECT set_config('enable_hashjoin'"), "seed \(seed): \(first.prefix(300))")
        #expect(first.contains("ORDER BY pk FOR UPDATE) AS locked), (SELECT count(*)"), "seed \(seed): \(first.prefix(400))")
        #expect(first.contains("ORDER BY pk FOR NO KEY UPDATE) AS locked)"), "seed \(seed): \(first.prefix(400))")
        #expect(expected.dropFirst().allSatisfy { !$0.contains("VALUES") }, "seed \(seed)")
    }

    /// A value of another type than its column (a history entry written before the model
    /// changed the attribute's type, say) cannot travel in the column's array: that statement
    /// takes a row of parameters each, cast as one parameter always was, and the others keep
    /// their arrays. Both write what they name.
    @Test func aValueOfAnotherTypeThanItsColumnTakesParametersOfItsOwn() async throws {
        let (database, url) = try cluster.makeDatabase()
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared
        let store = try RecordStore(path: directory + "/batch.strata", model: try todoModel(), options: options, history: .on)
        defer { try? store.close() }
        _ = try ReplicationTests.fill(store)
        let destination = try PostgresDestination(url: url, environment: ["PGPASSWORD": cluster.password])
        let replicator = PostgresReplicator(store: store, destination: destination)
        _ = try await replicator.push()
        let items = try store.read { try $0.objects("Item") }.sorted { $0.primaryKey < $1.primaryKey }

        var batch = BatchStatements(schema: ReplicationSchema(model: store.model))
        batch.add([HistoryChange(kind: .update, id: items[0], values: ["quantity": .double(7)]),
                   HistoryChange(kind: .update, id: items[1], values: ["title": .string("Arrayed")]),
                   HistoryChange(kind: .update, id: items[2], values: ["amount": .string("2.50")])])
        let queries = try batch.statements().queries
        let writes = queries.filter { $0.sql.hasPrefix("UPDATE") }
        #expect(writes.count == 3)
        #expect(writes.filter { $0.sql.contains("FROM (VALUES") }.map { $0.sql.contains("\"quantity\"") } == [true])
        #expect(writes.filter { $0.sql.contains("unnest(") }.count == 2)
        // The replicator's own session: its writes are not a server application's.
        let connection = try await replicator.connect()
        defer { connection.close() }
        try await connection.query("BEGIN")
        for query in queries { try await connection.query(query) }
        try await connection.query("COMMIT")
        let rows = try cluster.psql("SELECT quantity || ' ' || title || ' ' || amount FROM \"Item\" WHERE pk IN "
                                    + "(\(items[0].primaryKey), \(items[1].primaryKey), \(items[2].primaryKey)) ORDER BY pk",
                                    database: database).split(separator: "\n")
        #expect(rows.count == 3 && rows[0].hasPrefix("7 ") && rows[1].contains(" Arrayed ") && rows[2].hasSuffix(" 2.50"),
                "\(rows)")
    }
}
