import Foundation
import Strata
import Testing

/// The key-based API (`value(forKey:)`, `setValue(_:forKey:)`, primitive accessors) and the
/// change-inspection API (`changedValues()`, `changedValuesForCurrentEvent()`,
/// `committedValues(forKeys:)`, `hasPersistentChangedValues`, `objectIDs(forRelationshipNamed:)`,
/// `hasFault(forRelationshipNamed:)`).
@Suite struct KeyValueAndChangesTests {
    @Test func valuesByKeyAreTheTypedPropertiesValues() throws {
        try withContainer { container in
            let context = ModelContext(container)
            let list = TodoList(name: "Groceries")
            let milk = Item(title: "Milk", amount: 2)
            milk.list = list
            context.insert(list)
            try context.save()
            #expect(try milk.value(forKey: "title") as? String == "Milk")
            #expect(try milk.value(forKey: "amount") as? Decimal == 2)
            #expect(try milk.value(forKey: "list") as? TodoList === list)
            #expect(try list.value(forKey: "items") as? Set<Item> == [milk])
            #expect(try list.value(forKey: "itemCount") as? Int64 == 1)
            #expect(try milk.value(forKey: "listName") as? String == "Groceries")  // an optional, unwrapped

            try milk.setValue("Oat milk", forKey: "title")
            try milk.setValue(Decimal(3), forKey: "amount")
            #expect(milk.title == "Oat milk")
            let other = TodoList(name: "Other")
            try milk.setValue(other, forKey: "list")      // adopts the new list into the context
            #expect(other.context === context)
            #expect(other.items == [milk])
            try list.setValue([Item(title: "Eggs")], forKey: "items")   // an array for a Set property
            #expect(list.items.map(\.title) == ["Eggs"])
            try context.save()
            #expect(list.itemCount == 1)
            #expect(other.itemCount == 1)
        }
    }

    @Test func keyedSetsThrowAtOnceAndChangeNothing() throws {
        try withContainer { container in
            let context = ModelContext(container)
            let item = Item(title: "Tea")
            context.insert(item)
            try context.save()
            func expectError(_ what: Comment, _ body: () throws -> Void, _ match: (StrataError) -> Bool) {
                do {
                    try body()
                    Issue.record("no error: \(what)")
                } catch let e as StrataError {
                    #expect(match(e), "\(what): \(e)")
                } catch {
                    Issue.record("untyped error \(error): \(what)")
                }
            }
            expectError("unknown key", { try item.setValue(1, forKey: "colour") }) {
                if case .invalidArgument(let m) = $0 { return m.contains("colour") && m.contains("title") } else { return false }
            }
            expectError("unknown key read", { _ = try item.value(forKey: "colour") }) {
                if case .invalidArgument = $0 { return true } else { return false }
            }
            expectError("wrong type", { try item.setValue(42, forKey: "title") }) {
                if case .validation(_, let p, let r) = $0 { return p == "title" && r.contains("Int") } else { return false }
            }
            expectError("nil for a required attribute", { try item.setValue(nil, forKey: "title") }) {
                if case .validation(_, "title", _) = $0 { return true } else { return false }
            }
            expectError("derived", { try item.setValue("x", forKey: "lowerTitle") }) {
                if case .validation(_, "lowerTitle", _) = $0 { return true } else { return false }
            }
            expectError("wrong class for a to-one", { try item.setValue(Item(), forKey: "list") }) {
                if case .validation(_, "list", _) = $0 { return true } else { return false }
            }
            let elsewhere = ModelContext(container)
            let foreign = TodoList(name: "Foreign")
            elsewhere.insert(foreign)
            expectError("object of another context", { try item.setValue(foreign, forKey: "list") }) {
                if case .misuse = $0 { return true } else { return false }
            }
            #expect(item.title == "Tea")
            #expect(!item.hasChanges)
            #expect(item.list == nil)
            try context.save()                 // nothing was recorded as misuse
            try context.delete(item)
            expectError("deleted object", { try item.setValue("Coffee", forKey: "title") }) {
                if case .misuse = $0 { return true } else { return false }
            }
            try context.save()
            // nil empties a to-many; a value of another type does not fit it.
            let list = TodoList(name: "L")
            context.insert(list)
            list.items = [Item(title: "a")]
            try list.setValue(nil, forKey: "items")
            #expect(list.items.isEmpty)
            #expect(throws: StrataError.self) { try list.setValue("x", forKey: "items") }
        }
    }

    @Test func changedValuesListNewValuesAndCommittedValuesTheStoresOnes() throws {
        try withContainer { container in
            let context = ModelContext(container)
            let list = TodoList(name: "Home")
            let item = Item(title: "Broom", amount: 4)
            context.insert(item)
            context.insert(list)
            // Inserted: every property set away from its initial value.
            #expect(Set(item.changedValues().keys) == ["title", "amount"])
            #expect(item.hasPersistentChangedValues)
            #expect(try item.committedValues(forKeys: nil).isEmpty)
            try context.save()
            #expect(item.changedValues().isEmpty)
            #expect(!item.hasPersistentChangedValues)

            item.title = "Mop"
            item.list = list
            let changed = item.changedValues()
            #expect(Set(changed.keys) == ["title", "list"])
            #expect(changed["title"] as? String == "Mop")
            #expect(changed["list"] as? TodoList === list)
            // The other side of the relationship changed too, though its row is not written.
            #expect(Set(list.changedValues().keys) == ["items"])
            #expect(list.isUpdated)

            let committed = try item.committedValues(forKeys: ["title", "list", "lowerTitle"])
            #expect(committed["title"] as? String == "Broom")
            #expect(committed.keys.contains("list"))
            #expect(committed["list"] as? TodoList == nil)        // a boxed nil: no list in the store
            #expect(committed["lowerTitle"] as? String == "broom")
            #expect(try list.committedValues(forKeys: ["items"])["items"] as? Set<Item> == [])
            #expect(throws: StrataError.self) { try item.committedValues(forKeys: ["nope"]) }

            // Changing a value back removes it from the changes.
            item.title = "Broom"
            #expect(Set(item.changedValues().keys) == ["list"])
            try context.save()
            #expect(item.changedValues().isEmpty && list.changedValues().isEmpty)
            #expect(try list.committedValues(forKeys: ["items", "itemCount"])["itemCount"] as? Int64 == 1)
        }
    }

    @Test func currentEventChangesResetAtProcessPendingChangesAndSkipPrimitiveSets() throws {
        try withContainer { container in
            let context = ModelContext(container)
            let item = Item(title: "Pen")
            context.insert(item)
            try context.save()
            item.title = "Pencil"
            #expect(Set(item.changedValuesForCurrentEvent().keys) == ["title"])
            context.processPendingChanges()
            #expect(item.changedValuesForCurrentEvent().isEmpty)
            #expect(Set(item.changedValues().keys) == ["title"])       // still unsaved
            try item.setPrimitiveValue(Decimal(7), forKey: "amount")
            #expect(item.changedValuesForCurrentEvent().isEmpty)         // not an event
            #expect(Set(item.changedValues().keys) == ["title", "amount"])
            #expect(try item.primitiveValue(forKey: "amount") as? Decimal == 7)
            item.done = true
            #expect(Set(item.changedValuesForCurrentEvent().keys) == ["done"])
            try context.save()
            #expect(item.changedValuesForCurrentEvent().isEmpty)
            let fresh = ModelContext(container)
            let again = try fresh.existingObject(with: item.objectID, as: Item.self)
            #expect(again.amount == 7 && again.title == "Pencil" && again.done)
        }
    }

    @Test func validationSeesChangesOfEarlierEventsAndPrimitiveSets() throws {
        final class Checked: ManagedObject {
            @Attribute var code: String
            override func validateValue(_ value: Any?, forKey key: String) throws {
                if key == "code", let s = value as? String, s.count != 3 {
                    throw StrataError.invalidObject(entity: "Checked", primaryKey: objectID.primaryKey, property: key, reason: "three letters")
                }
            }
        }
        try withContainer(for: [Checked.self]) { container in
            let context = ModelContext(container)
            let c = Checked()
            c.code = "ABC"
            context.insert(c)
            try context.save()
            c.code = "TOOLONG"
            context.processPendingChanges()   // the change is no longer an event, still unsaved
            #expect(throws: StrataError.self) { try context.save() }
            c.code = "XYZ"
            try context.save()
            try c.setPrimitiveValue("NO", forKey: "code")
            #expect(throws: StrataError.self) { try context.save() }
        }
    }

    @Test func relationshipIdentifiersAndFaultStateWithoutFiringMembers() throws {
        try withContainer { container in
            let writer = ModelContext(container)
            let list = TodoList(name: "Big")
            writer.insert(list)
            for i in 0..<20 { list.items.insert(Item(title: "i\(i)")) }
            try writer.save()
            let pending = Item(title: "new")
            pending.list = list
            let ids = try list.objectIDs(forRelationshipNamed: "items")
            #expect(ids.count == 21)
            #expect(ids.filter(\.isTemporaryID) == [pending.objectID])
            #expect(throws: StrataError.self) { try list.objectIDs(forRelationshipNamed: "name") }
            #expect(throws: StrataError.self) { try list.hasFault(forRelationshipNamed: "nothing") }
            try writer.save()

            let reader = ModelContext(container)
            let l = try reader.object(with: list.objectID) as! TodoList
            #expect(l.isFault)
            #expect(try l.hasFault(forRelationshipNamed: "items"))
            let readIDs = try l.objectIDs(forRelationshipNamed: "items")
            #expect(Set(readIDs) == Set(list.items.map(\.objectID)))
            #expect(reader.statistics.faultsFired == 0)          // neither the list nor its items
            #expect(reader.registeredObjects.count == 1)          // members not even registered
            _ = l.items
            #expect(try !l.hasFault(forRelationshipNamed: "items"))
            #expect(reader.statistics.faultsFired == 0)
            // Another save makes the relationship stale again.
            list.items.insert(Item(title: "later"))
            try writer.save()
            #expect(try l.hasFault(forRelationshipNamed: "items"))
            #expect(l.items.count == 22)
            // To-one: a fault until the item and its target are loaded.
            let item = l.items.first!
            #expect(try item.hasFault(forRelationshipNamed: "list"))
            #expect(try item.objectIDs(forRelationshipNamed: "list") == [list.objectID])
            _ = l.name
            #expect(try !item.hasFault(forRelationshipNamed: "list"))
            reader.refresh(l, mergeChanges: false)
            #expect(try l.hasFault(forRelationshipNamed: "items"))
        }
    }
}

/// `obtainPermanentIDs(for:)`: primary keys reserved before the save, kept by it.
@Suite struct PermanentIdentifierTests {
    @Test func reservedKeysAreTheSavedObjectsKeys() throws {
        try withContainer { container in
            let context = ModelContext(container)
            let list = TodoList(name: "Early")
            let first = Item(title: "first")
            first.list = list
            context.insert(list)
            let temporary = list.objectID
            #expect(temporary.isTemporaryID)
            try context.obtainPermanentIDs(for: [list, first, list])
            #expect(!list.objectID.isTemporaryID && !first.objectID.isTemporaryID)
            #expect(list.isInserted && context.hasChanges)        // nothing saved
            #expect(try context.object(with: temporary) === list)   // the old identifier still finds it
            #expect(try context.object(with: list.objectID) === list)
            #expect(list.items == [first] && first.list === list)
            let other = ModelContext(container)
            #expect(throws: StrataError.self) { try other.existingObject(with: list.objectID) }

            let second = Item(title: "second")       // temporary, inserted after the reserved ones
            second.list = list
            var pending = FetchDescriptor<Item>()
            #expect(Set(try context.fetch(pending)) == [first, second])
            pending.predicate = try FetchPredicate(format: "list.name == 'Early'")
            #expect(Set(try context.fetch(pending)) == [first, second])
            let ids = (list.objectID, first.objectID)
            try context.save()
            #expect(list.objectID == ids.0 && first.objectID == ids.1)
            #expect(second.objectID.primaryKey! > first.objectID.primaryKey!)
            let seen = try other.existingObject(with: ids.0, as: TodoList.self)
            #expect(seen.itemCount == 2)
            #expect(Set(seen.items.map(\.title)) == ["first", "second"])

            // A reserved key that is rolled back is never handed out again.
            let dropped = Item(title: "dropped")
            context.insert(dropped)
            try context.obtainPermanentIDs(for: [dropped])
            let wasted = dropped.objectID.primaryKey!
            context.rollback()
            let later = Item(title: "later")
            context.insert(later)
            try context.save()
            #expect(later.objectID.primaryKey! > wasted)
            #expect(throws: StrataError.self) { try ModelContext(container).existingObject(with: ManagedObjectID(entityName: "Item", primaryKey: wasted)) }
            #expect(throws: StrataError.self) { try other.obtainPermanentIDs(for: [later]) }   // another context's object
        }
    }
}

/// Uniquing holds when a lookup named a primary key before a save gave it to an insert.
@Suite struct UniquingTests {
    @Test func aFaultForAKeyNoRowHadYieldsToTheInsertThatTakesIt() throws {
        try withContainer { container in
            let context = ModelContext(container)
            let early = try context.object(with: ManagedObjectID(entityName: "Item", primaryKey: 1))
            #expect(early.isFault)
            let item = Item(title: "first")
            context.insert(item)
            try context.save()
            #expect(item.objectID.primaryKey == 1)
            #expect(try context.object(with: item.objectID) === item)
            #expect(context.registeredObjects.filter { $0.objectID == item.objectID }.count == 1)
            #expect(early.context == nil)            // it named no stored object: it left the context
            let reserved = Item(title: "second")
            context.insert(reserved)
            let early2 = try context.object(with: ManagedObjectID(entityName: "Item", primaryKey: 2))
            try context.obtainPermanentIDs(for: [reserved])
            #expect(reserved.objectID.primaryKey == 2)
            #expect(try context.object(with: reserved.objectID) === reserved)
            #expect(early2.context == nil)
            withExtendedLifetime(early) {}
        }
    }
}
