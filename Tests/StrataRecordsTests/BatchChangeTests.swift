import Foundation
import StrataStorage
import StrataTesting
import Testing
@testable import StrataRecords

/// Changes by predicate (`updateAll`, `deleteAll`): the same outcome as changing each fetched
/// object in turn — derived values, delete rules, uniqueness, history — in one call.
@Suite struct BatchChangeTests {
    /// Six lists and 120 items with seeded amounts, quantities and lists, and three tags.
    static func filled(seed: UInt64, history: HistoryRecording = .asStored) throws -> RecordStore {
        var random = SplitMix64(seed: seed)
        let store = try makeStore(try todoModel(), history: history)
        try store.write { tx in
            let lists = try (0..<6).map { try tx.insert("TodoList", ["name": "List \($0)"]) }
            for index in 0..<120 {
                let item = try tx.insert("Item", ["title": "Item \(index)",
                                                  "amount": Decimal(Int.random(in: 0..<400, using: &random)) / 4,
                                                  "quantity": Int32.random(in: 1...9, using: &random)])
                try tx.set("list", of: item, to: lists[Int.random(in: 0..<6, using: &random)])
            }
            for index in 0..<3 {
                let tag = try tx.insert("Tag", ["label": "tag \(index)"])
                try tx.add(lists[index], to: "lists", of: tag)
                try tx.add(lists[index + 3], to: "lists", of: tag)
            }
        }
        return store
    }

    /// Generated predicates and changes, applied by `updateAll`/`deleteAll` to one store and
    /// object by object to another filled the same: the stores must end the same (derived
    /// values included) and check clean.
    @Test(arguments: Array(UInt64(1)...24))
    func aBatchChangeEqualsChangingEachObject(seed: UInt64) throws {
        var random = SplitMix64(seed: seed &* 7_919)
        let batch = try Self.filled(seed: seed)
        let single = try Self.filled(seed: seed)
        defer { try? batch.close(); try? single.close() }
        for step in 0..<4 {
            // One or two changes in one transaction: the second scans rows the first changed.
            var changes: [(request: FetchRequest, values: [String: any ValueConvertible], deleting: Bool, format: String)] = []
            for _ in 0..<Int.random(in: 1...2, using: &random) {
                let threshold = Int.random(in: 0...100, using: &random)
                let (entity, format) = [
                    ("Item", "amount > \(threshold)"),
                    ("Item", "quantity == \(threshold % 9 + 1)"),
                    ("Item", "list.name == 'List \(threshold % 6)'"),
                    ("Item", "title BEGINSWITH 'Item \(threshold % 12)'"),
                    ("Item", "amount > \(threshold) AND quantity < \(threshold % 9 + 1)"),
                    ("TodoList", "name == 'List \(threshold % 6)'"),
                    ("TodoList", "itemCount > \(threshold % 30)"),
                ][Int.random(in: 0..<7, using: &random)]
                let request = FetchRequest(entity, predicate: try FetchPredicate(format: format))
                let list = try single.read { try $0.objects("TodoList") }.randomElement(using: &random)
                var values: [String: any ValueConvertible] = entity == "Item"
                    ? [["amount": Decimal(threshold) / 8], ["quantity": Int32(threshold % 5 + 1)], ["title": "Set \(step)"],
                       ["list": list.map { $0 as any ValueConvertible } ?? StoredValue.null]][Int.random(in: 0..<4, using: &random)]
                    : ["budget": Decimal(threshold)]
                let deleting = Int.random(in: 0..<3, using: &random) == 0
                if deleting { values = [:] }
                changes.append((request, values, deleting, format))
            }
            let counted = try batch.write { tx in
                try changes.map { try $0.deleting ? tx.deleteAll($0.request) : tx.updateAll($0.request, set: $0.values) }
            }
            let expected = try single.write { tx in
                try changes.map { change in
                    var changed = 0
                    for id in try tx.fetch(change.request) {
                        if change.deleting {
                            guard try tx.values(of: id) != nil else { continue }
                            try tx.delete(id)
                        } else {
                            try tx.update(id, change.values)
                        }
                        changed += 1
                    }
                    return changed
                }
            }
            let what = "seed \(seed) step \(step): " + changes.map {
                "\($0.deleting ? "delete" : "update \($0.values.keys.sorted())") \($0.request.entity) where \($0.format)"
            }.joined(separator: "; ")
            #expect(counted == expected, "\(what)")
            #expect(try ReplicatedContent.ofStore(batch) == ReplicatedContent.ofStore(single), "\(what)")
            let problems = try batch.read { try $0.checkRecords() }
            #expect(problems.isEmpty, "\(what): \(problems)")
        }
    }

    @Test func deletingCascadesAndMovesDerivedValues() throws {
        let store = try Self.filled(seed: 3)
        defer { try? store.close() }
        let before = try store.read { try $0.count("Item") }
        let inList = try store.read { try $0.fetchCount(FetchRequest("Item", predicate: try FetchPredicate(format: "list.name == 'List 1'"))) }
        let deleted = try store.write { tx in
            try tx.deleteAll(FetchRequest("TodoList", predicate: try FetchPredicate(format: "name == 'List 1'")))
        }
        #expect(deleted == 1)
        #expect(try store.read { try $0.count("Item") } == before - inList)
        #expect(try store.read { try $0.checkRecords() }.isEmpty)
    }

    /// A `deny` rule broken by one object of the batch refuses the whole transaction.
    @Test func aDenyRuleRefusesTheWholeBatch() throws {
        let store = try makeStore(try DeleteRuleTests.model())
        defer { try? store.close() }
        try store.write { tx in
            _ = try tx.insert("User", ["name": "alone"])
            let owner = try tx.insert("User", ["name": "owner"])
            let folder = try tx.insert("Folder", ["name": "f"])
            try tx.set("owner", of: folder, to: owner)
        }
        #expect(throws: StrataError.self) {
            try store.write { tx in try tx.deleteAll(FetchRequest("User")) }
        }
        #expect(try store.read { try $0.count("User") } == 2)
    }

    @Test func uniquenessIsCheckedAcrossTheBatch() throws {
        let store = try Self.filled(seed: 4)
        defer { try? store.close() }
        #expect(throws: StrataError.self) {
            try store.write { tx in try tx.updateAll(FetchRequest("Tag"), set: ["label": "same"]) }
        }
        let labels = try store.read { reader in try reader.objects("Tag").compactMap { try reader.values(of: $0)?["label"] } }
        #expect(Set(labels) == [.string("tag 0"), .string("tag 1"), .string("tag 2")])
    }

    @Test func theHistoryRecordsEachChangedObject() throws {
        let store = try Self.filled(seed: 5, history: .on)
        defer { try? store.close() }
        let request = FetchRequest("Item", predicate: try FetchPredicate(format: "quantity == 3"))
        let matching = try store.read { try $0.fetch(request) }
        try store.write { tx in
            tx.author = "batch"
            try tx.updateAll(request, set: ["quantity": Int32(4)])
        }
        let last = try #require(try store.history().last)
        #expect(last.author == "batch")
        let updated = Set(last.changes.filter { $0.id.entity == "Item" && $0.values["quantity"] == .int(4) }.map(\.id))
        #expect(updated == Set(matching))
    }

    /// Bad input is a typed error, with nothing changed — even when nothing matches.
    @Test func badInputIsATypedErrorAndChangesNothing() throws {
        let store = try Self.filled(seed: 6)
        defer { try? store.close() }
        let none = FetchRequest("Item", predicate: try FetchPredicate(format: "quantity > 100"))
        #expect(throws: StrataError.self) { try store.write { tx in try tx.updateAll(none, set: ["colour": "red"]) } }
        #expect(throws: StrataError.self) { try store.write { tx in try tx.updateAll(none, set: ["lowerTitle": "x"]) } }
        #expect(throws: StrataError.self) { try store.write { tx in try tx.updateAll(none, set: ["quantity": "many"]) } }
        #expect(throws: StrataError.self) { try store.write { tx in try tx.deleteAll(FetchRequest("Nothing")) } }
        #expect(throws: StrataError.self) { _ = try FetchPredicate(format: "quantity >") }
        #expect(try store.read { try $0.count("Item") } == 120)
    }
}
