import Foundation
import Strata
import Testing

/// Identifiers and primary keys the object layer cannot hold (a primary key of 0, or above
/// `Int64.max`, where object identities live) come from a caller or a forged store: each throws
/// a typed error, or names no object, and never traps or hands out another object.
@Suite struct IdentityTrapTests {
    func expectMisuse(_ label: String, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("\(label): accepted")
        } catch StrataError.misuse {
        } catch {
            Issue.record("\(label): \(error), not misuse")
        }
    }

    func expectCorrupt(_ label: String, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("\(label): accepted")
        } catch StrataError.corrupt {
        } catch {
            Issue.record("\(label): \(error), not corrupt")
        }
    }

    /// A lookup by primary key 0 made a fault registered under identity 0; reading its
    /// `objectID` gave it a temporary identity, so the registry kept a dangling entry that the
    /// next lookup returned (a use after free). A key above `Int64.max` was masked into
    /// another object's key: the lookup returned that object.
    @Test func identifiersNamingNoPossibleObjectAreMisuse() throws {
        try withContainer { container in
            let context = ModelContext(container)
            let item = Item(title: "one")
            context.insert(item)
            try context.save()
            #expect(item.objectID.primaryKey == 1)
            for pk: UInt64 in [0, UInt64(Int64.max) + 2, .max] {
                let id = ManagedObjectID(entityName: "Item", primaryKey: pk)
                #expect(id.primaryKey == nil, "pk \(pk)")
                for round in 0..<2 {
                    expectMisuse("object(with:) of pk \(pk), round \(round)") {
                        let o = try context.object(with: id)
                        _ = "\(o)"   // reads objectID
                    }
                    expectMisuse("existingObject(with:) of pk \(pk), round \(round)") { _ = try context.existingObject(with: id) }
                }
            }
            #expect(try context.existingObject(with: ManagedObjectID(entityName: "Item", primaryKey: 1), as: Item.self) === item)
        }
    }

    /// A row stored under primary key 0 (forged: keys start at 1) fetches as a fault whose
    /// identity must stay 0 while it is registered: giving it a temporary identity when its
    /// `objectID` was read left the registry pointing at it after it was released.
    @Test func aFaultOfAForgedRowKeepsItsIdentity() throws {
        try withContainer { container in
            let context = ModelContext(container)
            context.insert(Item(title: "one"))
            try context.save()
            let rowKey: (UInt64) -> [UInt8] = { pk in withUnsafeBytes(of: pk.bigEndian) { Array($0) } }
            try container.store.storage.write { tx in
                let rows = try #require(try tx.tree("rows:Item"))
                let row = try #require(try rows.get(rowKey(1)))
                try rows.put(rowKey(0), row)
            }
            let other = ModelContext(container)
            for round in 0..<3 {
                let fetched = try other.fetch(FetchDescriptor<Item>())
                #expect(fetched.count == 2, "round \(round)")
                let descriptions = fetched.map { "\($0)" }   // reads every objectID
                #expect(descriptions.count == 2)
            }
            #expect(other.registeredObjects.isEmpty)
        }
    }

    /// A forged primary-key counter at or above 2^63 hands out keys no object identity holds:
    /// saving, reserving permanent identifiers and fetching with pending inserts trapped
    /// converting the key; each now throws `corrupt` and leaves the context's changes.
    @Test func primaryKeysAboveInt64MaxAreCorruptionNotATrap() throws {
        try withContainer { container in
            let counter = withUnsafeBytes(of: (UInt64(1) << 63).bigEndian) { Array($0) }
            try container.store.storage.write { tx in try #require(try tx.tree("records:meta")).put(Array("next:Item".utf8), counter) }
            let context = ModelContext(container)
            let item = Item(title: "late")
            context.insert(item)
            expectCorrupt("obtainPermanentIDs") { try context.obtainPermanentIDs(for: [item]) }
            #expect(item.objectID.isTemporaryID)
            expectCorrupt("fetch with a pending insert") { _ = try context.fetch(FetchDescriptor<Item>()) }
            expectCorrupt("save") { try context.save() }
            #expect(item.isInserted && item.objectID.isTemporaryID)
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<Item>()) == 0)
        }
    }

    /// A row the record layer wrote under a key at 2^63 (no counter hands one out since keys
    /// live in ranges below 2^62; a caller that names the key still can), reached through a
    /// stored to-one: the to-one reads back as identity `Int64.min`, whose description negated
    /// it (a trap), and a later save that moved the row's derived values converted its key (a
    /// trap). Now the target is a fault that fails to load with `objectNotFound`.
    @Test func aToOneNamingAKeyAboveInt64MaxIsNoTrap() throws {
        try withContainer { container in
            let itemID = try container.store.write { tx in
                let list = try tx.insert("TodoList", primaryKey: UInt64(1) << 63, ["name": "far"])
                #expect(list.primaryKey == UInt64(1) << 63)
                return try tx.insert("Item", ["title": "x", "amount": Decimal(2), "list": list])
            }
            let context = ModelContext(container)
            let item = try context.existingObject(with: ManagedObjectID(entityName: "Item", primaryKey: itemID.primaryKey), as: Item.self)
            let list = try #require(item.list)
            #expect(!"\(list)".isEmpty && !list.objectID.uriRepresentation.isEmpty)
            #expect(list.name == "")
            #expect(throws: StrataError.self) { try context.load(list) }
            _ = list.items
            item.amount = 5                      // moves the far list's derived total
            let saved = try #require(try context.save())
            #expect(saved.updatedIDs.contains(item.objectID))
        }
    }

    /// A save notification of another container named rows of another store by primary key:
    /// merging it gave this context's objects the other store's values.
    @Test func mergingAnotherContainersSaveIsMisuse() throws {
        try withContainer { first in
            try withContainer { second in
                let a = ModelContext(first)
                let b = ModelContext(second)
                let mine = Item(title: "mine")
                b.insert(mine)
                try b.save()
                let theirs = Item(title: "theirs")
                a.insert(theirs)
                let notification = try #require(try a.save())
                #expect(mine.objectID.primaryKey == theirs.objectID.primaryKey)
                b.mergeChanges(from: notification)
                #expect(mine.title == "mine")
                expectMisuse("the save after merging another container's notification") { try b.save() }
            }
        }
    }
}
