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
}
