import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// What replication rests on: a replica that applies nothing but the persistent history, in
/// token order, holds the store's data — every attribute, derived value, to-one and
/// many-to-many link — after seeded random transactions (cascades, rollbacks and purges among
/// them). A failure prints its seed.
@Suite struct HistoryReplayTests {
    /// The data a consumer of the history keeps.
    struct Replica {
        var values: [ObjectID: [String: StoredValue]] = [:]
        var targets: [ObjectID: [String: ObjectID]] = [:]
        var links: Set<[String]> = []

        mutating func apply(_ transaction: HistoryTransaction) {
            for change in transaction.changes {
                switch change.kind {
                case .insert, .update:
                    if change.kind == .insert { values[change.id] = [:]; targets[change.id] = [:] }
                    for (name, value) in change.values { values[change.id, default: [:]][name] = value.isNull ? nil : value }
                    for (name, target) in change.toOneTargets { targets[change.id, default: [:]][name] = target ?? nil }
                case .delete:
                    values[change.id] = nil
                    targets[change.id] = nil
                case .link, .unlink:
                    let link = [change.id.description, change.relationship ?? "?", change.other?.description ?? "?"]
                    if change.kind == .link { links.insert(link) } else { links.remove(link) }
                }
            }
        }
    }

    @Test(arguments: [UInt64(11), 2_718_281, 31_415_926])
    func aReplicaFedOnlyByTheHistoryEqualsTheStore(seed: UInt64) throws {
        let store = try HistoryTests.historyStore()
        defer { try? store.close() }
        var rng = SplitMix64(seed: seed)
        var replica = Replica()
        var token = HistoryToken.start
        var tagNumber = 0
        for round in 0..<150 {
            do {
                try store.write { tx in
                    if rng.next() % 4 == 0 { tx.author = "author\(rng.next() % 3)" }
                    for _ in 0..<(1 + Int(rng.next() % 6)) {
                        try Self.randomOperation(tx, &rng, &tagNumber)
                    }
                    if rng.next() % 10 == 0 { throw CancellationError() }  // rolled back: nothing recorded
                }
            } catch is CancellationError {
            } catch let error as StrataError {
                guard case .conflict = error else { throw error }  // a deny or uniqueness refusal
            }
            for transaction in try store.history(after: token) {
                replica.apply(transaction)
                token = transaction.token
            }
            if round % 50 == 49 {
                try Self.expectEqual(replica, store, "seed \(seed) round \(round)")
                // A consumer that is up to date may purge what it has applied.
                try store.purgeHistory(through: token)
            }
        }
        #expect(token.value > 60, "seed \(seed): only \(token.value) transactions recorded")
        try Self.expectEqual(replica, store, "seed \(seed) at the end")
        try expectConsistent(store, "seed \(seed)")
    }

    static func randomOperation(_ tx: RecordTransaction, _ rng: inout SplitMix64, _ tagNumber: inout Int) throws {
        let lists = try tx.objects("TodoList"), items = try tx.objects("Item"), tags = try tx.objects("Tag")
        func pick(_ ids: [ObjectID]) -> ObjectID? { ids.isEmpty ? nil : ids[Int(rng.next() % UInt64(ids.count))] }
        let amount = Decimal(Int(rng.next() % 20_001) - 5_000) / 100
        switch rng.next() % 12 {
        case 0: try tx.insert("TodoList", ["name": ["Home", "Café", "ÉTÉ", "work"][Int(rng.next() % 4)]])
        case 1, 2:
            var values: [String: any ValueConvertible] = ["title": "t\(rng.next() % 50)", "amount": amount,
                                                          "quantity": Int(rng.next() % 9)]
            if rng.next() % 2 == 0 { values["weight"] = Double(rng.next() % 1000) / 8 }
            if let list = pick(lists) { values["list"] = list }
            try tx.insert("Item", values)
        case 3: if let item = pick(items) { try tx.update(item, ["amount": amount, "quantity": Int(rng.next() % 9)]) }
        case 4: if let item = pick(items) { try tx.set("list", of: item, to: rng.next() % 4 == 0 ? nil : pick(lists)) }
        case 5: if let item = pick(items) { try tx.delete(item) }
        case 6: if let list = pick(lists), rng.next() % 3 == 0 { try tx.delete(list) }
        case 7: if let list = pick(lists) { try tx.update(list, ["name": "renamed\(rng.next() % 9)"]) }
        case 8:
            tagNumber += 1
            try tx.insert("Tag", ["label": "tag\(tagNumber)", "score": Int(rng.next() % 100)])
        case 9: if let tag = pick(tags), let list = pick(lists) { try tx.add(tag, to: "tags", of: list) }
        case 10: if let tag = pick(tags), let list = pick(lists) { try tx.remove(tag, from: "tags", of: list) }
        default: if let tag = pick(tags), rng.next() % 2 == 0 { try tx.delete(tag) }
        }
    }

    static func expectEqual(_ replica: Replica, _ store: RecordStore, _ label: String) throws {
        try store.read { reader in
            var seen = 0
            for entity in reader.model.entities {
                for id in try reader.objects(entity.name) {
                    seen += 1
                    let stored = (try reader.values(of: id) ?? [:]).filter { !$0.value.isNull }
                    #expect(replica.values[id] == stored, "\(label): \(id) values")
                    for relationship in entity.relationships where !relationship.isToMany {
                        #expect(replica.targets[id]?[relationship.name] == (try reader.target(of: relationship.name, of: id)),
                                "\(label): \(id).\(relationship.name)")
                    }
                    for relationship in entity.relationships where relationship.isToMany && relationship.isManyToMany {
                        let members = Set(try reader.members(of: relationship.name, of: id).map(\.description))
                        let replicated = Set(replica.links.filter { $0[0] == id.description && $0[1] == relationship.name }
                            .map { $0[2] })
                        #expect(members == replicated, "\(label): \(id).\(relationship.name)")
                    }
                }
            }
            #expect(seen == replica.values.count, "\(label): the replica holds \(replica.values.count) objects, the store \(seen)")
        }
    }
}
