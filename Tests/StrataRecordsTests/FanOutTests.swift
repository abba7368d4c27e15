import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// Copies through two to-one hops: a change at either hop, or at the end, reaches every row
/// whose path passes through it.
@Suite struct FanOutTests {
    static func model() throws -> Model {
        try Model {
            Entity("Owner") {
                AttributeDescription("name", .string)
                RelationshipDescription("lists", toMany: "List", inverse: "owner")
            }
            Entity("List") {
                AttributeDescription("title", .string)
                AttributeDescription("rate", .decimal, default: 1)
                RelationshipDescription("owner", toOne: "Owner", inverse: "lists")
                RelationshipDescription("items", toMany: "Item", inverse: "list")
                DerivedAttributeDescription("ownerName", .string, "owner.name", optional: true)
            }
            Entity("Item") {
                AttributeDescription("amount", .decimal, default: 0)
                RelationshipDescription("list", toOne: "List", inverse: "items")
                DerivedAttributeDescription("ownerName", .string, "list.owner.name", optional: true)
                DerivedAttributeDescription("viaDerived", .string, "list.ownerName", optional: true)
                DerivedAttributeDescription("cost", .decimal, "amount * list.rate", optional: true)
                DerivedAttributeDescription("loud", .string, "uppercase:(list.owner.name)", optional: true)
            }
        }
    }

    @Test func changesAtEveryHopReachTheRowsBehindThem() throws {
        let store = try makeStore(try Self.model())
        let (ann, bob, l1, l2, items) = try store.write { tx -> (ObjectID, ObjectID, ObjectID, ObjectID, [ObjectID]) in
            let ann = try tx.insert("Owner", ["name": "Ann"])
            let bob = try tx.insert("Owner", ["name": "Bob"])
            let l1 = try tx.insert("List", ["title": "a", "owner": ann, "rate": Decimal(2)])
            let l2 = try tx.insert("List", ["title": "b", "owner": bob])
            var items: [ObjectID] = []
            for i in 0..<4 { items.append(try tx.insert("Item", ["amount": Decimal(i + 1), "list": i < 3 ? l1 : l2])) }
            return (ann, bob, l1, l2, items)
        }
        #expect(try store.value("ownerName", of: items[0]) == .string("Ann"))
        #expect(try store.value("viaDerived", of: items[3]) == .string("Bob"))
        #expect(try store.value("cost", of: items[2]) == .decimal(6))
        // The end of the path changes: every item two hops away follows.
        try store.write { tx in try tx.update(ann, ["name": "Anne"]) }
        for i in 0..<3 {
            #expect(try store.value("ownerName", of: items[i]) == .string("Anne"))
            #expect(try store.value("viaDerived", of: items[i]) == .string("Anne"))
            #expect(try store.value("loud", of: items[i]) == .string("ANNE"))
        }
        #expect(try store.value("ownerName", of: items[3]) == .string("Bob"))
        // The middle hop changes: the list moves to another owner; its rate changes too.
        try store.write { tx in try tx.update(l1, ["owner": bob, "rate": Decimal(3)]) }
        #expect(try store.value("ownerName", of: items[1]) == .string("Bob"))
        #expect(try store.value("cost", of: items[1]) == .decimal(6))
        // The first hop changes, then the owner goes away (nullify).
        try store.write { tx in try tx.set("list", of: items[0], to: l2) }
        #expect(try store.value("cost", of: items[0]) == .decimal(1))
        try store.write { tx in try tx.delete(bob) }
        #expect(try store.value("ownerName", of: items[0]) == .null)
        #expect(try store.value("ownerName", of: l2) == .null)
        try expectConsistent(store)
    }

    /// Copies over one hop (`list.title`, `canonical:(list.title)`, `uppercase:(list.title)`)
    /// take a renamed list's value once for all the items that reach it. Random transactions
    /// rename lists (some twice, some back), move items between renamed lists, insert and
    /// delete items and lists, and read in the middle (a settle before the commit); after
    /// each, every derived value equals its recomputation from scratch.
    @Test(arguments: [UInt64(11), 12, 13])
    func copiesOverOneHopFollowEveryChange(seed: UInt64) throws {
        let model = try Model {
            Entity("List") {
                AttributeDescription("title", .string, optional: true)
                AttributeDescription("small", .int64, default: 0)
                RelationshipDescription("items", toMany: "Item", inverse: "list")
            }
            Entity("Item") {
                AttributeDescription("note", .string, optional: true)
                RelationshipDescription("list", toOne: "List", inverse: "items")
                DerivedAttributeDescription("listTitle", .string, "list.title", optional: true)
                DerivedAttributeDescription("folded", .string, "canonical:(list.title)", optional: true)
                DerivedAttributeDescription("loud", .string, "uppercase:(list.title)", optional: true)
                DerivedAttributeDescription("small", .int16, "list.small", optional: true)
            }
        }
        let store = try makeStore(model)
        var random = SplitMix64(seed: seed)
        var lists: [ObjectID] = [], items: [ObjectID] = []
        try store.write { tx in
            for i in 0..<6 { lists.append(try tx.insert("List", ["title": "List \(i)"])) }
            for i in 0..<120 { items.append(try tx.insert("Item", ["note": "n\(i)", "list": lists[i % 6]])) }
        }
        let titles = ["Äpfel", "apfel", "Übung", "ÜBUNG", "x", "Straße"]
        for step in 0..<40 {
            try store.write { tx in
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0...3:
                        let list = lists.randomElement(using: &random)!
                        let title: any ValueConvertible = Int.random(in: 0..<8, using: &random) == 0
                            ? StoredValue.null : titles.randomElement(using: &random)!
                        try tx.update(list, ["title": title, "small": Int64.random(in: -5...5, using: &random)])
                    case 4...5:
                        guard let item = items.randomElement(using: &random) else { continue }
                        try tx.set("list", of: item, to: Bool.random(using: &random) ? lists.randomElement(using: &random)! : nil)
                    case 6:
                        items.append(try tx.insert("Item", ["list": lists.randomElement(using: &random)!]))
                    case 7:
                        guard !items.isEmpty else { continue }
                        try tx.delete(items.remove(at: Int.random(in: 0..<items.count, using: &random)))
                    case 8:
                        guard lists.count > 2 else { continue }
                        try tx.delete(lists.remove(at: Int.random(in: 0..<lists.count, using: &random)))
                        lists.append(try tx.insert("List", ["title": titles.randomElement(using: &random)!]))
                    default:
                        // A read settles the derived values before the commit.
                        guard let item = items.randomElement(using: &random) else { continue }
                        _ = try tx.values(of: item)
                    }
                }
            }
            let problems = try store.read { try $0.checkRecords() }
            #expect(problems.isEmpty, "seed \(seed) step \(step): \(problems.prefix(3))")
        }
    }

    /// A copied value that does not fit the derived attribute's type is refused as before:
    /// the commit fails with a validation error naming the attribute, and nothing changes.
    @Test func aCopyThatDoesNotFitIsRefused() throws {
        let model = try Model {
            Entity("List") {
                AttributeDescription("big", .int64, default: 0)
                RelationshipDescription("items", toMany: "Item", inverse: "list")
            }
            Entity("Item") {
                RelationshipDescription("list", toOne: "List", inverse: "items")
                DerivedAttributeDescription("small", .int16, "list.big", optional: true)
            }
        }
        let store = try makeStore(model)
        let (list, item) = try store.write { tx in
            let list = try tx.insert("List", ["big": Int64(7)])
            return (list, try tx.insert("Item", ["list": list]))
        }
        do {
            try store.write { tx in try tx.update(list, ["big": Int64(1) << 40]) }
            Issue.record("a copy that does not fit was stored")
        } catch let error as StrataError {
            guard case .validation(let entity, let property, _) = error, entity == "Item", property == "small" else {
                Issue.record("refused with \(error), not a validation error of Item.small")
                return
            }
        }
        #expect(try store.value("small", of: item) == .int(7))
        try expectConsistent(store)
    }

    /// A copy over one hop within one entity (a node's parent's name), kept in a fetch index:
    /// random renames, moves (to another node, to none, to itself), inserts and deletes; after
    /// each transaction every derived value and every index entry equals its recomputation.
    @Test(arguments: [UInt64(21), 22])
    func aCopyFromTheSameEntityIsIndexedAndFollowsEveryChange(seed: UInt64) throws {
        let model = try Model {
            Entity("Node") {
                AttributeDescription("name", .string, optional: true)
                RelationshipDescription("parent", toOne: "Node", inverse: "children", optional: true)
                RelationshipDescription("children", toMany: "Node", inverse: "parent")
                DerivedAttributeDescription("parentName", .string, "parent.name", optional: true)
                FetchIndex("parentName")
            }
        }
        let store = try makeStore(model)
        var random = SplitMix64(seed: seed)
        var nodes: [ObjectID] = []
        try store.write { tx in
            for i in 0..<40 { nodes.append(try tx.insert("Node", ["name": "n\(i % 7)"])) }
            for i in 1..<40 { try tx.set("parent", of: nodes[i], to: nodes[i / 3]) }
        }
        for step in 0..<40 {
            try store.write { tx in
                for _ in 0..<Int.random(in: 1...5, using: &random) {
                    switch Int.random(in: 0..<8, using: &random) {
                    case 0...3:
                        let name: any ValueConvertible = Int.random(in: 0..<6, using: &random) == 0
                            ? StoredValue.null : "n\(Int.random(in: 0..<5, using: &random))"
                        try tx.update(nodes.randomElement(using: &random)!, ["name": name])
                    case 4...5:
                        let node = nodes.randomElement(using: &random)!
                        let parent = Int.random(in: 0..<6, using: &random) == 0 ? nil : nodes.randomElement(using: &random)!
                        try tx.set("parent", of: node, to: parent)
                    case 6:
                        nodes.append(try tx.insert("Node", ["name": "new", "parent": nodes.randomElement(using: &random)!]))
                    default:
                        guard nodes.count > 5 else { continue }
                        try tx.delete(nodes.remove(at: Int.random(in: 0..<nodes.count, using: &random)))
                    }
                }
            }
            let problems = try store.read { try $0.checkRecords() }
            #expect(problems.isEmpty, "seed \(seed) step \(step): \(problems.prefix(3))")
        }
    }
}
