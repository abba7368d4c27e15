import Foundation
import Observation
import Strata
import Synchronization
import Testing

/// Undo and redo on a context (``UndoStack``): what a step is, what undo and redo restore,
/// who hears it, and what ends the stack. The random walk is UndoModelTests.
@Suite struct UndoTests {
    static let classes: [ManagedObject.Type] = [TodoList.self, Item.self]

    /// A context with an undo stack, and an item titled "a" saved through it.
    private func withSavedItem(_ body: (ModelContext, UndoStack, Item) throws -> Void) throws {
        try withContainer { container in
            let context = ModelContext(container)
            let stack = UndoStack()
            context.undoStack = stack
            let item = Item(title: "a")
            context.insert(item)
            try context.save()
            try body(context, stack, item)
        }
    }

    @Test func offByDefault_undoWithoutAStackDoesNothing() throws {
        try withContainer { container in
            let context = ModelContext(container)
            #expect(context.undoStack == nil)
            let item = Item(title: "a")
            context.insert(item)
            context.processPendingChanges()
            context.undo()
            context.redo()
            #expect(item.context === context && item.title == "a")
        }
    }

    @Test func anEventIsOneStep_undoAndRedoWalkTheSteps_pastTheStackNothingHappens() throws {
        try withContainer { container in
            let context = ModelContext(container)
            let stack = UndoStack()
            context.undoStack = stack
            let item = Item(title: "a", amount: 1)
            context.insert(item)
            context.processPendingChanges()
            item.title = "b"
            item.amount = 2
            item.title = "c"                              // one event: one step, "a"/1 → "c"/2
            stack.setActionName("Edit")
            #expect(stack.canUndo && !stack.canRedo && stack.undoActionName == "Edit")
            context.processPendingChanges()
            item.title = "d"
            context.undo()                                // the open event first
            #expect(item.title == "c" && stack.canRedo)
            context.undo()
            #expect(item.title == "a" && item.amount == 1 && stack.redoActionName == "Edit")
            context.undo()                                // the insert
            #expect(item.context == nil && !stack.canUndo)
            context.undo()                                // past the stack: nothing
            #expect(item.context == nil)
            context.redo()
            #expect(item.context === context && item.title == "a" && context.insertedObjects == [item])
            context.redo()
            #expect(item.title == "c" && item.amount == 2)
            item.amount = 5                               // a new change forgets what could be redone
            #expect(!stack.canRedo)
            context.redo()
            #expect(item.title == "c" && item.amount == 5)
            try context.save()
            #expect(try ModelContext(container).fetch(FetchDescriptor<Item>()).map(\.title) == ["c"])
        }
    }

    @Test func aValueSetAndSetBackIsNoStep() throws {
        try withSavedItem { context, stack, item in
            item.title = "b"
            item.title = "a"
            #expect(stack.canUndo)                        // the insert's step
            context.undo()
            #expect(item.isDeleted)                       // the insert undone: nothing else was a step
        }
    }

    @Test func groupsMakeOneStepOfSeveralEvents_andNest() throws {
        try withSavedItem { context, stack, item in
            stack.beginGrouping()
            item.title = "b"
            context.processPendingChanges()
            stack.beginGrouping()
            item.title = "c"
            context.processPendingChanges()
            stack.endGrouping()
            #expect(stack.groupingLevel == 1)
            item.title = "d"
            stack.endGrouping()
            stack.endGrouping()                           // without a group: nothing
            context.undo()
            #expect(item.title == "a")
            context.redo()
            #expect(item.title == "d")
        }
    }

    @Test func levelsBoundTheSteps() throws {
        try withContainer { container in
            let context = ModelContext(container)
            let stack = UndoStack(levels: 2)
            context.undoStack = stack
            let item = Item(title: "0")
            context.insert(item)
            for n in 1...4 {
                context.processPendingChanges()
                item.title = "\(n)"
            }
            context.processPendingChanges()
            context.undo()
            context.undo()
            context.undo()                                // a third step was forgotten
            #expect(item.title == "2" && item.context === context && !stack.canUndo)
            stack.levels = 1
            context.redo()
            #expect(item.title == "3")
        }
    }

    @Test func aSaveKeepsTheSteps_andTheUndoIsSavedNext() throws {
        try withContainer { container in
            let context = ModelContext(container)
            context.undoStack = UndoStack()
            let list = TodoList(name: "l")
            let item = Item(title: "a", amount: 2)
            item.list = list
            context.insert(list)
            try context.save()
            item.amount = 7
            try context.save()
            #expect(list.total == 7)
            context.undo()
            #expect(item.amount == 2 && item.hasChanges && context.hasChanges)
            try context.save()
            #expect(list.total == 2)                      // derived values follow the undo at the save
            context.redo()
            try context.save()
            let other = ModelContext(container)
            #expect(try other.fetch(FetchDescriptor<TodoList>()).map(\.total) == [7])
        }
    }

    @Test func undoingBackToTheSavedValuesLeavesNothingToSave() throws {
        try withSavedItem { context, _, item in
            item.title = "b"
            #expect(context.hasChanges)
            context.undo()
            #expect(!context.hasChanges && !item.hasChanges)
        }
    }

    @Test func rollbackAndResetForgetTheSteps() throws {
        try withSavedItem { context, stack, item in
            item.title = "b"
            context.processPendingChanges()
            context.rollback()
            #expect(!stack.canUndo && item.title == "a")
            item.title = "c"
            context.reset()
            #expect(!stack.canUndo)
        }
    }

    /// Deletes a save carried out come back under new identities, with what their rules took:
    /// the cascade's objects and their values.
    @Test func aSavedCascadingDeleteComesBackWhole() throws {
        try withContainer { container in
            let context = ModelContext(container)
            context.undoStack = UndoStack()
            let list = TodoList(name: "Groceries")
            for (title, amount) in [("milk", 2), ("bread", 3)] as [(String, Decimal)] {
                list.items.insert(Item(title: title, amount: amount))
            }
            context.insert(list)
            try context.save()
            let oldID = list.objectID
            try context.delete(list)
            try context.save()
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<Item>()) == 0)
            context.undo()
            #expect(!list.isDeleted && list.context === context && list.objectID != oldID)
            #expect(Set(list.items.map(\.title)) == ["milk", "bread"])
            try context.save()
            let other = ModelContext(container)
            let lists = try other.fetch(FetchDescriptor<TodoList>())
            #expect(lists.map(\.name) == ["Groceries"] && lists.map(\.itemCount) == [2] && lists.map(\.total) == [5])
            context.redo()
            try context.save()
            #expect(try other.fetchCount(FetchDescriptor<Item>()) == 0)
        }
    }

    @Test func manyToManyLinksAndTheirDeletesAreSteps() throws {
        try withContainer(for: ModelRulesTests.classes) { container in
            let context = ModelContext(container)
            context.undoStack = UndoStack()
            let shelf = Bookcase()
            shelf.label = "s"
            let book = Volume()
            book.title = "b"
            context.insert(shelf)
            context.insert(book)
            try context.save()
            shelf.books.insert(book)
            try context.save()
            #expect(shelf.bookCount == 1)
            try context.delete(book)
            try context.save()
            #expect(shelf.bookCount == 0)
            context.undo()                                // the book comes back, on its shelf
            #expect(shelf.books.map(\.title) == ["b"])
            try context.save()
            #expect(shelf.bookCount == 1)
            context.undo()                                // the link goes
            #expect(shelf.books.isEmpty && book.shelves.isEmpty)
            try context.save()
            #expect(shelf.bookCount == 0)
        }
    }

    @Test func observersHearUndoAndRedo() throws {
        try withSavedItem { context, _, item in
            var heard: [String?] = []
            let token = try item.observe(\.title) { _, change in heard.append(change.newValue) }
            var changedKeys: [Set<String>] = []
            let changes = context.observeObjectsDidChange { change in
                if let keys = change.changedKeys[item] { changedKeys.append(keys) }
            }
            let woke = Mutex(false)
            withObservationTracking { _ = item.title } onChange: { woke.withLock { $0 = true } }
            item.title = "b"
            context.processPendingChanges()
            heard = []
            changedKeys = []
            woke.withLock { $0 = false }
            withObservationTracking { _ = item.title } onChange: { woke.withLock { $0 = true } }
            context.undo()
            #expect(heard == ["a"] && changedKeys == [["title"]] && woke.withLock { $0 })
            context.redo()
            #expect(heard == ["a", "b"])
            withExtendedLifetime(token) {}
            withExtendedLifetime(changes) {}
        }
    }

    /// A context with an undo stack and a journal titled "a" inserted in it, not saved.
    private func withInsertedJournal(_ body: (ModelContext, Journal) throws -> Void) throws {
        try withContainer(for: [Journal.self]) { container in
            let context = ModelContext(container)
            context.undoStack = UndoStack()
            let journal = Journal()
            journal.title = "a"
            context.insert(journal)
            try body(context, journal)
        }
    }

    @Test func aRedoneInsertIsNotAwokenAgain() throws {
        try withInsertedJournal { context, journal in
            context.undo()
            context.redo()
            #expect(journal.hooks.filter { $0 == "awakeFromInsert" }.count == 1 && journal.context === context)
        }
    }

    /// Steps hold objects weakly: a context dropped with its stack full is freed.
    @Test func aContextWithStepsIsFreedWhenDropped() throws {
        try withContainer { container in
            weak var dropped: ModelContext?
            weak var droppedItem: Item?
            do {
                let context = ModelContext(container)
                context.undoStack = UndoStack()
                let item = Item(title: "a")
                context.insert(item)
                try context.save()
                item.title = "b"
                try context.save()
                dropped = context
                droppedItem = item
            }
            #expect(dropped == nil && droppedItem == nil)
        }
    }

    @Test func aStackGivenToAnotherContextForgetsItsSteps() throws {
        try withContainer { container in
            let first = ModelContext(container)
            let second = ModelContext(container)
            let stack = UndoStack()
            first.undoStack = stack
            let item = Item(title: "a")
            first.insert(item)
            first.processPendingChanges()
            second.undoStack = stack
            #expect(first.undoStack == nil && !stack.canUndo)
            first.undo()
            second.undo()
            #expect(item.context === first)
        }
    }

    // MARK: The review's cases (each failed before its fix)

    @Test func whatWillSaveChangesIsPartOfTheSavedStep() throws {
        try withInsertedJournal { context, journal in
            try context.save()
            journal.bumpsLeft = 1
            journal.title = "b"
            try context.save()                            // willSave bumps the revision to 1
            #expect(journal.revision == 1)
            context.undo()
            #expect(journal.title == "a" && journal.revision == 0)
        }
    }

    @Test func replayRunsNoPrepareForDeletion() throws {
        try withInsertedJournal { context, journal in
            context.processPendingChanges()
            context.undo()                                // the insert taken back: no deletion hook
            #expect(!journal.hooks.contains("prepareForDeletion"))
            context.redo()
            try context.save()
            try context.delete(journal)
            context.undo()
            context.redo()
            #expect(journal.hooks.filter { $0 == "prepareForDeletion" }.count == 1)
        }
    }

    @Test func anUndoOfAMoveBackToTheSavedStateLeavesNothingToSave() throws {
        try withContainer { container in
            let context = ModelContext(container)
            context.undoStack = UndoStack()
            let first = TodoList(name: "1"), second = TodoList(name: "2")
            let item = Item(title: "a")
            item.list = first
            context.insert(first)
            context.insert(second)
            try context.save()
            item.list = second
            context.processPendingChanges()
            context.undo()
            #expect(!context.hasChanges && context.updatedObjects.isEmpty && item.list === first)
            #expect(Set(first.items.map(\.title)) == ["a"] && second.items.isEmpty)
        }
    }

    @Test func anObjectReleasedAndFetchedAgainIsFoundByItsSteps() throws {
        try withContainer { container in
            let context = ModelContext(container)
            context.undoStack = UndoStack()
            var item: Item? = Item(title: "a")
            context.insert(item!)
            try context.save()
            item!.title = "b"
            try context.save()
            let id = item!.objectID
            item = nil                                    // released: the steps hold it weakly
            let again = try context.existingObject(with: id, as: Item.self)
            try context.delete(again)
            try context.save()
            context.undo()                                // the delete: inserted again
            #expect(!again.isDeleted && again.context === context && again.title == "b")
            context.undo()                                // the rename, on the same object
            #expect(again.title == "a")
            try context.save()
            #expect(try ModelContext(container).fetch(FetchDescriptor<Item>()).map(\.title) == ["a"])
        }
    }

    @Test func redoIsNotUndoing_andAPausedStackRecordsNothing() throws {
        try withSavedItem { context, stack, item in
            var seen: [(Bool, Bool)] = []
            let token = try item.observe(\.title) { _, _ in seen.append((stack.isUndoing, stack.isRedoing)) }
            item.title = "b"
            context.undo()
            context.redo()
            #expect(seen.map(\.0) == [false, true, false] && seen.map(\.1) == [false, false, true])
            withExtendedLifetime(token) {}
            context.processPendingChanges()
            stack.disableRecording()
            stack.disableRecording()
            item.title = "imported"
            stack.enableRecording()
            #expect(!stack.isRecording)
            stack.enableRecording()
            stack.enableRecording()                       // without a pause: nothing
            #expect(stack.isRecording)
            context.processPendingChanges()
            context.undo()                                // the last recorded step: "a" -> "b"
            #expect(item.title == "a")
            stack.levels = -3
            #expect(stack.levels == 0)
        }
    }

    @Test func deletingAnInsertedParentCascadesWithoutHooksAndSaves() throws {
        try withContainer { container in
            let context = ModelContext(container)
            let list = TodoList(name: "l")
            let item = Item(title: "a")
            item.list = list
            context.insert(list)
            try context.delete(list)                      // inserted: forgotten, and its cascade runs now
            #expect(item.isDeleted && item.context == nil)
            try context.save()
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<Item>()) == 0)
        }
    }
}
