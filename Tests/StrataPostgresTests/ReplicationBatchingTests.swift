import Foundation
import StrataPostgres
import StrataRecords
import StrataStorage
import StrataTesting
import Testing

/// Grouping consecutive Strata transactions into one PostgreSQL transaction applies their net
/// effect (a row's last values, a deletion, a pair's last link state): generated transactions —
/// inserts, updates, moves, cascade deletes, links made and broken, rows touched by several
/// transactions of one batch — pushed with batch sizes from one to all, PostgreSQL compared
/// with the store after every push.
@Suite(.serialized) struct ReplicationBatchingTests {
    let cluster: PostgresCluster
    let directory: String

    init() throws {
        cluster = try PostgresCluster.shared
        directory = NSTemporaryDirectory() + "strata-batching-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func batchesApplyTheNetEffectOfTheirTransactions(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let (database, url) = try cluster.makeDatabase()
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared
        let store = try RecordStore(path: directory + "/batch-\(seed).strata", model: try todoModel(), options: options,
                                    history: .on)
        defer { try? store.close() }
        let destination = try PostgresDestination(url: url, environment: ["PGPASSWORD": cluster.password])
        var lists: [ObjectID] = []
        var items: [ObjectID] = []
        var tags: [ObjectID] = []
        var pushes = 0
        for round in 0..<12 {
            // A run of small transactions over few rows, so one batch touches a row many times.
            try Self.commit(Int.random(in: 5...40, using: &random), to: store, lists: &lists, items: &items, tags: &tags,
                            random: &random)
            let batch = [1, 2, 7, 1_000][Int.random(in: 0...3, using: &random)]
            let report = try await PostgresReplicator(store: store, destination: destination,
                                                      transactionsPerBatch: batch).push()
            pushes += 1
            #expect(report.batches <= max(1, (report.transactions + batch - 1) / batch) + 1,
                    "seed \(seed) round \(round): \(report)")
            let same = try ReplicatedContent.ofDatabase(database, in: cluster, model: store.model)
                == ReplicatedContent.ofStore(store)
            #expect(same, "seed \(seed) round \(round), batch \(batch): PostgreSQL differs from the store")
            if !same { return }
        }
        #expect(pushes == 12)
    }

    /// `count` transactions of one to four random changes each.
    static func commit(_ count: Int, to store: RecordStore, lists: inout [ObjectID], items: inout [ObjectID],
                       tags: inout [ObjectID], random: inout SplitMix64) throws {
        for _ in 0..<count {
            try store.write { transaction in
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    try step(transaction, lists: &lists, items: &items, tags: &tags, random: &random)
                }
            }
        }
    }

    /// One random change: most of them to few rows, deletes that cascade and nullify.
    static func step(_ tx: RecordTransaction, lists: inout [ObjectID], items: inout [ObjectID], tags: inout [ObjectID],
                     random: inout SplitMix64) throws {
        func pick(_ ids: [ObjectID]) -> ObjectID? { ids.isEmpty ? nil : ids[Int.random(in: 0..<ids.count, using: &random)] }
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<8:
            lists.append(try tx.insert("TodoList", ["name": "List \(Int.random(in: 0..<1000, using: &random))"]))
        case 8..<14:
            tags.append(try tx.insert("Tag", ["label": "tag \(random.next())"]))
        case 14..<34:
            let item = try tx.insert("Item", ["title": "Item \(Int.random(in: 0..<1000, using: &random))",
                                              "amount": Decimal(Int.random(in: 0..<400, using: &random)) / 4])
            if let list = pick(lists) { try tx.set("list", of: item, to: list) }
            items.append(item)
        case 34..<54:
            if let item = pick(items) {
                try tx.update(item, ["title": "Edited \(Int.random(in: 0..<1000, using: &random))",
                                     "quantity": Int32.random(in: 1...9, using: &random)])
            }
        case 54..<66:
            if let item = pick(items) { try tx.set("list", of: item, to: Bool.random(using: &random) ? pick(lists) : nil) }
        case 66..<72:
            if let list = pick(lists) { try tx.update(list, ["name": "Renamed \(Int.random(in: 0..<1000, using: &random))"]) }
        case 72..<80:
            if let tag = pick(tags), let list = pick(lists) { try tx.add(list, to: "lists", of: tag) }
        case 80..<86:
            if let tag = pick(tags), let list = pick(lists) { try tx.remove(list, from: "lists", of: tag) }
        case 86..<92:
            if let item = pick(items) {
                try tx.delete(item)
                items.removeAll { $0 == item }
            }
        case 92..<96:
            if let list = pick(lists) {
                // Cascades to its items.
                let gone = Set(try tx.members(of: "items", of: list))
                try tx.delete(list)
                lists.removeAll { $0 == list }
                items.removeAll { gone.contains($0) }
            }
        default:
            if let tag = pick(tags) {
                try tx.delete(tag)
                tags.removeAll { $0 == tag }
            }
        }
    }
}
