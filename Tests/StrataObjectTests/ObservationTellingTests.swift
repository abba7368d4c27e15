import Foundation
import Observation
import Strata
import Synchronization
import Testing

/// A change tells Swift Observation only for objects whose properties it saw read (decision 55).
/// These check the other half of that contract: every path that can leave a tracking closure
/// waiting on an object — a first read of a new object, of a fetched fault, of a relationship,
/// a read made long before the tracking started — still hears each way the object can change.
@Suite struct ObservationTellingTests {
    /// Runs `read` under tracking, then `change`; returns whether the tracking fired.
    private func fires(_ read: () -> Void, when change: () throws -> Void) rethrows -> Bool {
        let woke = Mutex(false)
        withObservationTracking { read() } onChange: { woke.withLock { $0 = true } }
        try change()
        return woke.withLock { $0 }
    }

    /// A list and an item inserted in `context` and saved, the item in the list when `related`.
    private func savedListAndItem(in context: ModelContext, related: Bool) throws -> (TodoList, Item) {
        let list = TodoList(name: "l")
        let item = Item(title: "a")
        context.insert(list)
        context.insert(item)
        if related { item.list = list }
        try context.save()
        return (list, item)
    }

    @Test func anInsertedObjectSetBeforeAnyReadIsHeardOnceTracked() throws {
        try withContainer(for: [TodoList.self, Item.self]) { container in
            let context = ModelContext(container)
            let item = Item(title: "a")   // set in its initializer: never read yet
            context.insert(item)
            item.amount = 2
            #expect(fires({ _ = item.title }, when: { item.title = "b" }))
            #expect(fires({ _ = item.amount }, when: { item.amount = 3 }))
        }
    }

    @Test func aFetchedFaultIsHeardAfterItsFirstTrackedRead() throws {
        try withContainer(for: [TodoList.self, Item.self]) { container in
            let writer = ModelContext(container)
            writer.insert(Item(title: "a"))
            try writer.save()
            let context = ModelContext(container)
            let item = try #require(try context.fetch(FetchDescriptor<Item>()).first)
            #expect(item.isFault)
            #expect(fires({ _ = item.title }, when: { item.title = "b" }))
            // A key-based set takes the same path.
            #expect(try fires({ _ = item.title }, when: { try item.setValue("c", forKey: "title") }))
        }
    }

    @Test func aReadBeforeTrackingStartedStillLetsALaterTrackingHear() throws {
        try withContainer(for: [TodoList.self, Item.self]) { container in
            let context = ModelContext(container)
            let item = Item(title: "a")
            context.insert(item)
            _ = item.title   // read outside any tracking
            #expect(fires({ _ = item.amount }, when: { item.amount = 5 }))
        }
    }

    @Test func aMergedSaveIsHeardByAnObjectTrackedInTheMergingContext() throws {
        try withContainer(for: [TodoList.self, Item.self]) { container in
            let writer = ModelContext(container)
            let written = Item(title: "a")
            writer.insert(written)
            try writer.save()
            let viewer = ModelContext(container)
            let shown = try viewer.existingObject(with: written.objectID, as: Item.self)
            #expect(try fires({ _ = shown.amount }, when: {
                written.amount = 7
                viewer.mergeChanges(from: try #require(try writer.save()))
            }))
            #expect(shown.amount == 7)
        }
    }

    @Test func aToManyTrackedThroughItsOwnerHearsAnInverseSet() throws {
        try withContainer(for: [TodoList.self, Item.self]) { container in
            let context = ModelContext(container)
            let (list, item) = try savedListAndItem(in: context, related: false)
            #expect(fires({ _ = list.items }, when: { item.list = list }))
            #expect(list.items.contains(item))
        }
    }

    @Test func aRollbackIsHeardByATrackedObject() throws {
        try withContainer(for: [TodoList.self, Item.self]) { container in
            let context = ModelContext(container)
            let item = Item(title: "a")
            context.insert(item)
            try context.save()
            item.title = "changed"   // never read under tracking yet
            #expect(fires({ _ = item.title }, when: { context.rollback() }))
            #expect(item.title == "a")
        }
    }

    @Test func aManyToManyTrackedOnOneSideHearsALinkMadeOnTheOther() throws {
        try withContainer(for: [Shelf.self, Book.self, Reader.self]) { container in
            let context = ModelContext(container)
            let book = Book()
            book.title = "b"
            let reader = Reader()
            reader.name = "r"
            context.insert(book)
            context.insert(reader)
            try context.save()
            #expect(fires({ _ = reader.books }, when: { book.readers = [reader] }))
            #expect(reader.books.contains(book))
        }
    }

    @Test func aToManyTrackedThroughItsOwnerHearsAMemberDeletedAndSaved() throws {
        try withContainer(for: [TodoList.self, Item.self]) { container in
            let context = ModelContext(container)
            let (list, item) = try savedListAndItem(in: context, related: true)
            #expect(try fires({ _ = list.items }, when: {
                try context.delete(item)
                try context.save()
            }))
            #expect(list.items.isEmpty)
        }
    }

    @Test func aToManyTrackedInTheMergingContextHearsAMemberMovedByAnotherSave() throws {
        try withContainer(for: [TodoList.self, Item.self]) { container in
            let writer = ModelContext(container)
            let (list, item) = try savedListAndItem(in: writer, related: false)
            let viewer = ModelContext(container)
            let shownList = try viewer.existingObject(with: list.objectID, as: TodoList.self)
            let shownItem = try viewer.existingObject(with: item.objectID, as: Item.self)
            _ = shownItem.title   // loaded: a merge moves a loaded object's to-one
            #expect(try fires({ _ = shownList.items }, when: {
                item.list = list
                viewer.mergeChanges(from: try #require(try writer.save()))
            }))
            #expect(shownList.items.contains(shownItem))
        }
    }

    @Test func aToManyTrackedThroughItsOwnerHearsADeleteRolledBack() throws {
        try withContainer(for: [TodoList.self, Item.self]) { container in
            let context = ModelContext(container)
            let (list, item) = try savedListAndItem(in: context, related: true)
            try context.delete(item)
            #expect(list.items.isEmpty)
            #expect(fires({ _ = list.items }, when: { context.rollback() }))
            #expect(list.items.contains(item))
        }
    }

    @Test func aToManyTrackedInTheMergingContextHearsAMemberDeletedByAnotherSave() throws {
        try withContainer(for: [TodoList.self, Item.self]) { container in
            let writer = ModelContext(container)
            let (list, item) = try savedListAndItem(in: writer, related: true)
            let viewer = ModelContext(container)
            let shownList = try viewer.existingObject(with: list.objectID, as: TodoList.self)
            let shownItem = try viewer.existingObject(with: item.objectID, as: Item.self)
            _ = shownItem.title
            #expect(shownList.items.count == 1)
            #expect(try fires({ _ = shownList.items }, when: {
                try writer.delete(item)
                viewer.mergeChanges(from: try #require(try writer.save()))
            }))
            #expect(shownList.items.isEmpty)
        }
    }
}
