import Foundation
import Strata
import Testing

/// Transient attributes: modelled, never stored; tracked as changes but not persistent ones; reset
/// and kept exactly where the contract says.
@Suite struct TransientTests {
    private func savedPerson(_ context: ModelContext) throws -> Person {
        let p = Person()
        p.firstName = "Ada"
        p.lastName = "Lovelace"
        context.insert(p)
        try context.save()
        return p
    }

    @Test func defaultsApplyAndAChangeIsNotPersistent() throws {
        try withContainer(for: [Person.self, Team.self]) { container in
            let context = ModelContext(container)
            let p = try savedPerson(context)
            #expect(p.isSelected == false && p.mode == "draft" && p.note == nil)
            p.isSelected = true
            #expect(context.hasChanges)
            #expect(p.hasChanges)
            #expect(p.changedValues().keys.sorted() == ["isSelected"])
            #expect(p.changedValuesForCurrentEvent()["isSelected"] as? Bool == true)
            #expect(!p.hasPersistentChangedValues)
            // Saving writes nothing (no commit) and leaves the value as the baseline.
            let before = container.store.storage.lastCommittedTransactionID
            #expect(try context.save() == nil)
            #expect(container.store.storage.lastCommittedTransactionID == before)
            #expect(!context.hasChanges && p.changedValues().isEmpty && p.isSelected)
            // Another context reads the row: no transient there.
            let other = ModelContext(container)
            let q = try other.existingObject(with: p.objectID, as: Person.self)
            #expect(q.isSelected == false && q.mode == Person.awakeMode)
        }
    }

    @Test func savedAlongsideStoredChangesAndKeptThroughTheSave() throws {
        try withContainer(for: [Person.self, Team.self]) { container in
            let context = ModelContext(container)
            let p = try savedPerson(context)
            p.note = "hello"
            p.lastName = "Byron"
            #expect(p.hasPersistentChangedValues)
            try context.save()
            #expect(p.note == "hello" && p.changedValues().isEmpty)
            let inserted = Person()
            inserted.firstName = "Grace"
            inserted.lastName = "Hopper"
            inserted.mode = "new"
            context.insert(inserted)
            try context.save()
            #expect(inserted.mode == "new" && inserted.changedValues().isEmpty)
        }
    }

    @Test func resetByRollbackRefreshWithoutMergeAndRefreshAll_keptByRefreshWithMerge() throws {
        try withContainer(for: [Person.self, Team.self]) { container in
            let context = ModelContext(container)
            let p = try savedPerson(context)

            p.mode = "edit"
            context.rollback()
            #expect(p.mode == "draft" && !context.hasChanges)

            p.mode = "edit"
            context.refresh(p, mergeChanges: true)
            #expect(p.mode == "edit" && p.changedValues().keys.sorted() == ["mode"])

            context.refresh(p, mergeChanges: false)
            #expect(p.isFault)
            #expect(p.mode == Person.awakeMode)   // the awake hook's baseline, not a change
            #expect(p.changedValues().isEmpty && !context.hasChanges)

            // A saved transient value (a baseline) survives refresh(mergeChanges: true) too.
            p.mode = "kept"
            try context.save()
            context.refresh(p, mergeChanges: true)
            #expect(!p.isFault && p.mode == "kept")

            p.isSelected = true
            p.firstName = "Augusta"
            context.refreshAllObjects()
            #expect(p.isSelected == false && p.mode == "draft")
            #expect(p.firstName == "Augusta" && p.changedValues().keys.sorted() == ["firstName"])

            p.firstName = "Ada"
            p.isSelected = true
            context.refreshAllObjects()
            // Only the transient was left changed: after refreshAllObjects nothing is.
            #expect(!context.hasChanges && !p.isSelected)
        }
    }

    @Test func mergesKeepTransientValues() throws {
        try withContainer(for: [Person.self, Team.self]) { container in
            let context = ModelContext(container)
            let p = try savedPerson(context)
            p.isSelected = true
            try context.save()
            p.note = "unsaved"
            let other = ModelContext(container)
            let q = try other.existingObject(with: p.objectID, as: Person.self)
            q.lastName = "King"
            let saved = try #require(try other.save())
            context.mergeChanges(from: saved)
            #expect(p.lastName == "King" && p.isSelected && p.note == "unsaved")
            #expect(p.changedValues().keys.sorted() == ["note"])
        }
    }

    @Test func storePredicatesRejectTransients_inMemoryKeyValueWorks() throws {
        try withContainer(for: [Person.self, Team.self]) { container in
            let context = ModelContext(container)
            let p = try savedPerson(context)
            #expect(throws: StrataError.self) {
                _ = try context.fetch(FetchDescriptor<Person>(predicate: try FetchPredicate(format: "mode == %@", "draft")))
            }
            do {
                _ = try context.fetch(FetchDescriptor<Person>(predicate: try FetchPredicate(format: "isSelected == true")))
                Issue.record("a transient in a store predicate was accepted")
            } catch let StrataError.invalidFetch(reason) {
                #expect(reason.contains("transient"), "\(reason)")
            }
            try p.setValue("set by key", forKey: "mode")
            #expect(try p.value(forKey: "mode") as? String == "set by key")
            #expect(p.changedValuesForCurrentEvent()["mode"] as? String == "set by key")
            #expect(throws: StrataError.self) { try p.setValue(3, forKey: "mode") }
        }
    }
}
