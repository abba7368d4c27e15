import Foundation
import Strata
import Testing

/// One test per lifecycle hook of seed 004: when it runs, what it may do.
@Suite struct LifecycleTests {
    @Test func awakeFromInsertRunsOnceAndItsValuesAreSaved() throws {
        try withContainer(for: [Journal.self]) { container in
            let context = ModelContext(container)
            let j = Journal()
            j.title = "Diary"
            #expect(j.hooks.isEmpty)                     // not in a context yet
            context.insert(j)
            context.insert(j)                            // again: nothing
            #expect(j.hooks == ["awakeFromInsert"])
            try context.save()
            let other = try ModelContext(container).existingObject(with: j.objectID, as: Journal.self)
            #expect(other.stamp == "inserted")
            #expect(!other.hooks.contains("awakeFromInsert"))
        }
    }

    @Test func awakeFromFetchRunsWhenAFaultFires() throws {
        try withContainer(for: [Journal.self]) { container in
            let context = ModelContext(container)
            let j = Journal()
            j.title = "Log"
            context.insert(j)
            try context.save()
            let reader = ModelContext(container)
            let f = try reader.fetch(FetchDescriptor<Journal>())[0]
            #expect(f.isFault && f.hooks.isEmpty)
            _ = f.title
            #expect(f.hooks == ["awakeFromFetch"])
            _ = f.revision
            #expect(f.hooks == ["awakeFromFetch"])       // once per fulfilment
        }
    }

    @Test func awakeFromSnapshotEventsNamesRollbackRefreshMergeAndMergePolicy() throws {
        try withContainer(for: [Journal.self]) { container in
            let a = ModelContext(container)
            let j = Journal()
            j.title = "One"
            a.insert(j)
            try a.save()
            j.title = "Two"
            a.rollback()
            #expect(j.snapshotEvents.last == .rollback)
            #expect(j.title == "One")

            j.title = "Mine"
            a.refresh(j, mergeChanges: true)
            #expect(j.snapshotEvents.last == .refresh)
            #expect(j.title == "Mine")                   // kept on top

            let b = ModelContext(container)
            let saves = SaveRecorder(container)
            let other = try b.existingObject(with: j.objectID, as: Journal.self)
            other.revision = 5
            try b.save()
            a.mergeChanges(from: try #require(saves.last))
            #expect(j.snapshotEvents.last == .merge)
            #expect(j.revision == 5 && j.title == "Mine")

            other.title = "Theirs"
            try b.save()
            a.mergePolicy = .rollback
            try a.save()
            #expect(j.snapshotEvents.last == .mergePolicy)
            #expect(j.title == "Theirs")
        }
    }

    @Test func willSaveRunsForEveryChangedObjectAndItsChangesAreSaved() throws {
        try withContainer(for: [Journal.self]) { container in
            let context = ModelContext(container)
            let inserted = Journal(), updated = Journal(), deleted = Journal(), untouched = Journal()
            for (j, t) in [(updated, "u"), (deleted, "d"), (untouched, "n")] { j.title = t; context.insert(j) }
            try context.save()
            for j in [updated, deleted, untouched] { j.hooks = [] }
            inserted.title = "i"
            context.insert(inserted)
            updated.title = "u2"
            updated.bumpsLeft = 1                        // willSave changes a value: saved too
            try context.delete(deleted)
            try context.save()
            #expect(inserted.hooks.filter { $0 == "willSave" }.count == 1)
            // Its hook changed it, so it ran again (and changed nothing the second time).
            #expect(updated.hooks.filter { $0 == "willSave" }.count == 2)
            #expect(deleted.hooks.contains("willSave"))
            #expect(!untouched.hooks.contains("willSave"))
            let fresh = try ModelContext(container).existingObject(with: updated.objectID, as: Journal.self)
            #expect(fresh.revision == 1 && fresh.title == "u2")
        }
    }

    @Test func aWillSaveLoopIsBoundedAndReported() throws {
        /// Changes itself on every willSave: never settles.
        final class Restless: ManagedObject {
            @Attribute(default: 0) var n: Int64
            override func willSave() { n += 1 }
        }
        try withContainer(for: [Restless.self]) { container in
            let context = ModelContext(container)
            let r = Restless()
            context.insert(r)
            do {
                try context.save()
                Issue.record("a willSave loop was not stopped")
            } catch StrataError.misuse(let message) {
                #expect(message.contains("willSave") && message.contains("\(r.objectID)"), "\(message)")
            }
            #expect(r.n == 16)
            #expect(r.isInserted)                        // nothing was written
            var stored = FetchDescriptor<Restless>()
            stored.includesPendingChanges = false
            #expect(try context.fetchCount(stored) == 0)
        }
    }

    @Test func didSaveRunsAfterTheWriteWithPermanentIdentifiers() throws {
        try withContainer(for: [Journal.self]) { container in
            let context = ModelContext(container)
            let j = Journal()
            j.title = "x"
            context.insert(j)
            #expect(j.objectID.isTemporaryID)
            try context.save()
            #expect(Array(j.hooks.suffix(2)) == ["willSave", "didSave"])
            #expect(!j.objectID.isTemporaryID)
        }
    }

    @Test func prepareForDeletionRunsAtDeleteBeforeTheSave() throws {
        try withContainer(for: [Journal.self]) { container in
            let context = ModelContext(container)
            let j = Journal()
            j.title = "x"
            context.insert(j)
            try context.save()
            try context.delete(j)
            #expect(j.hooks.last == "prepareForDeletion")
            try context.delete(j)                        // deleting twice runs it once
            #expect(j.hooks.filter { $0 == "prepareForDeletion" }.count == 1)
        }
    }

    @Test func turningIntoAFaultRunsWillThenDid() throws {
        try withContainer(for: [Journal.self]) { container in
            let context = ModelContext(container)
            let j = Journal()
            j.title = "x"
            context.insert(j)
            try context.save()
            j.hooks = []
            context.refresh(j, mergeChanges: false)
            #expect(j.hooks == ["willTurnIntoFault", "didTurnIntoFault"])
            #expect(j.sawFaultInDidTurnIntoFault)
            #expect(j.isFault)
            #expect(j.title == "x")                      // fires again
        }
    }
}
