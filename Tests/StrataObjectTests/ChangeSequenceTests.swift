import Foundation
import Strata
import Synchronization
import Testing

/// A container over a fresh store for async tests, closed afterwards.
func withAsyncContainer<T>(for types: [ManagedObject.Type] = [TodoList.self, Item.self],
                           isolation: isolated (any Actor)? = #isolation,
                           _ body: (ModelContainer) async throws -> T) async throws -> T {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-seq-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let container = try ModelContainer(for: types, path: dir.appendingPathComponent("s.strata").path)
    defer { try? container.close() }
    return try await body(container)
}

/// How many sequences got their first element, from the tasks iterating them.
private final class StartedCount: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// Fetch results and single objects as async sequences that yield after the saves that
/// affect them (decision 35).
@Suite struct ChangeSequenceTests {
    private func fill(_ container: ModelContainer) throws {
        let c = ModelContext(container)
        let home = TodoList(name: "Home"), work = TodoList(name: "Work")
        c.insert(home)
        c.insert(work)
        for (title, list, done) in [("a", home, false), ("b", home, true), ("c", work, false)] {
            let i = Item(title: title)
            i.done = done
            i.list = list
            c.insert(i)
        }
        try c.save()
    }

    private func item(_ c: ModelContext, _ title: String) throws -> Item {
        try #require(try c.fetch(FetchDescriptor<Item>(predicate: try FetchPredicate(format: "title == %@", title))).first)
    }

    private var openItems: FetchDescriptor<Item> {
        FetchDescriptor<Item>(predicate: try! FetchPredicate(format: "done == NO"), sortBy: [FetchSortDescriptor("title")])
    }

    @Test func resultsYieldAfterSavesThatChangeThemAndShowSavedValues() async throws {
        try await withAsyncContainer { container in
            try fill(container)
            let context = ModelContext(container)
            let other = ModelContext(container)
            var it = context.results(of: openItems).makeAsyncIterator()
            let first = try #require(try await it.next())
            #expect(first.map(\.title) == ["a", "c"])
            #expect(!context.automaticallyMergesChangesFromStore)

            // A done item changing (not in the results, stays out) yields nothing; the next
            // save, which renames a result, does, and the object shows the saved title.
            try item(other, "b").amount = 5
            try other.save()
            try item(other, "c").title = "c2"
            try other.save()
            let second = try #require(try await it.next())
            #expect(second.map(\.title) == ["a", "c2"])
            #expect(second[0] === first[0] && second[1] === first[1])

            // An insert that matches, from this context's own save.
            let d = Item(title: "b0")
            context.insert(d)
            try context.save()
            let third = try #require(try await it.next())
            #expect(third.map(\.title) == ["a", "b0", "c2"] && third[1] === d)

            // Marking an item done leaves the results; deleting one too.
            try item(other, "a").done = true
            try other.save()
            #expect(try await it.next()?.map(\.title) == ["b0", "c2"])
            try other.delete(try item(other, "b0"))
            try other.save()
            #expect(try await it.next()?.map(\.title) == ["c2"])
            #expect(d.isDeleted)
        }
    }

    @Test func savesThatDoNotAffectTheResultsYieldNothing() async throws {
        try await withAsyncContainer { container in
            try fill(container)
            let (started, ready) = AsyncStream<Void>.makeStream()
            let descriptor = openItems
            let follower = Task { () -> [String]? in
                let context = ModelContext(container)
                var it = context.results(of: descriptor).makeAsyncIterator()
                _ = try await it.next()
                ready.yield()
                return try await it.next()?.map(\.title)
            }
            for await _ in started { break }
            let other = ModelContext(container)
            try item(other, "b").title = "b2"
            try other.save()
            other.insert(TodoList(name: "Errands"))
            try other.save()
            try await Task.sleep(for: .milliseconds(300))
            follower.cancel()
            #expect(try await follower.value == nil)
        }
    }

    @Test func derivedValuesAndPathsThroughRelationshipsCount() async throws {
        try await withAsyncContainer { container in
            try fill(container)
            let context = ModelContext(container)
            let other = ModelContext(container)
            // Lists sorted by name: an item added moves a list's derived count.
            var lists = context.results(of: FetchDescriptor<TodoList>(sortBy: [FetchSortDescriptor("name")])).makeAsyncIterator()
            let before = try #require(try await lists.next())
            #expect(before.map(\.itemCount) == [2, 1])
            let i = Item(title: "d")
            other.insert(i)
            i.list = try other.fetch(FetchDescriptor<TodoList>(predicate: try FetchPredicate(format: "name == 'Work'")))[0]
            try other.save()
            let after = try #require(try await lists.next())
            #expect(after.map(\.itemCount) == [2, 2] && after[1] === before[1])

            // Items of the list named "Errands": renaming a list changes which items match.
            var errands = context.results(of: FetchDescriptor<Item>(predicate: try FetchPredicate(format: "list.name == 'Errands'"),
                                                                     sortBy: [FetchSortDescriptor("title")])).makeAsyncIterator()
            #expect(try await errands.next()?.isEmpty == true)
            try other.fetch(FetchDescriptor<TodoList>(predicate: try FetchPredicate(format: "name == 'Work'")))[0].name = "Errands"
            try other.save()
            #expect(try await errands.next()?.map(\.title) == ["c", "d"])
        }
    }

    @Test func objectUpdatesFollowOneObjectUntilDeleted() async throws {
        try await withAsyncContainer { container in
            try fill(container)
            let context = ModelContext(container)
            let other = ModelContext(container)
            let a = try item(context, "a")
            var it = context.updates(of: a).makeAsyncIterator()
            #expect(await it.next() === a)
            try item(other, "c").title = "c2"      // another object: not yielded for
            try other.save()
            try item(other, "a").amount = 7
            try other.save()
            #expect(await it.next() === a)
            #expect(a.amount == 7)
            try other.delete(try item(other, "a"))
            try other.save()
            #expect(await it.next() == nil)
            #expect(await it.next() == nil)

            // An object inserted and saved by its own context: the save is an update of it.
            let n = Item(title: "n")
            context.insert(n)
            var ni = context.updates(of: n).makeAsyncIterator()
            #expect(await ni.next() === n)
            try context.save()
            #expect(await ni.next() === n)
        }
    }

    @Test func iterationEndsWhenCancelled_andTheContextStopsMerging() async throws {
        try await withAsyncContainer { container in
            try fill(container)
            let descriptor = openItems
            let task = Task { () -> (Int, Bool) in
                let context = ModelContext(container)
                var count = 0
                for try await _ in context.results(of: descriptor) { count += 1 }
                return (count, context.automaticallyMergesChangesFromStore)
            }
            try await Task.sleep(for: .milliseconds(100))
            task.cancel()
            let (count, merges) = try await task.value
            #expect(count == 1 && !merges)

            // After the sequence is gone, the context no longer takes in other saves by itself.
            let context = ModelContext(container)
            let a = try item(context, "a")
            #expect(a.title == "a")    // loaded: a fault would read the newest commit
            do {
                var it = context.updates(of: a).makeAsyncIterator()
                _ = await it.next()
            }
            let other = ModelContext(container)
            try item(other, "a").title = "a2"
            try other.save()
            #expect(a.title == "a")
            _ = try context.fetch(FetchDescriptor<Item>())
            #expect(a.title == "a")
        }
    }

    /// A context held by the main actor iterates there (the iterator's `next(isolation:)`
    /// stays in the caller's isolation: nothing is sent elsewhere).
    @MainActor @Test func iteratesOnTheMainActor() async throws {
        try await withAsyncContainer { container in
            try fill(container)
            let context = ModelContext(container)
            var seen: [[String]] = []
            for try await items in context.results(of: openItems) {
                seen.append(items.map(\.title))
                if seen.count == 2 { break }
                items[0].title = "a!"
                try context.save()
            }
            #expect(seen == [["a", "c"], ["a!", "c"]])

            // `it.next()` by hand, in a main-actor closure: the plain `next()` runs in the
            // caller's isolation too (a nonisolated one did not compile here: "sending 'it'
            // risks causing data races").
            let byHand: () async throws -> [String]? = {
                var it = context.results(of: openItems).makeAsyncIterator()
                var updates = context.updates(of: try item(context, "c")).makeAsyncIterator()
                _ = await updates.next()
                return try await it.next()?.map(\.title)
            }
            #expect(try await byHand() == ["a!", "c"])
        }
    }

    /// Closing the container ends every sequence waiting on it (nothing can be fetched any
    /// more), instead of leaving its task suspended for good.
    @Test func closingTheContainerEndsWaitingSequences() async throws {
        try await withAsyncContainer { container in
            try fill(container)
            let descriptor = openItems
            let started = StartedCount()
            let results = Task { () -> Int in
                let context = ModelContext(container)
                var count = 0
                for try await _ in context.results(of: descriptor) { count += 1; started.add() }
                return count
            }
            let updates = Task { () -> Int in
                let context = ModelContext(container)
                var count = 0
                for await _ in context.updates(of: try item(context, "a")) { count += 1; started.add() }
                return count
            }
            // Both have their first element (a close before a first fetch would make it throw).
            for _ in 0..<1000 where started.value < 2 { try await Task.sleep(for: .milliseconds(5)) }
            try container.close()
            #expect(try await results.value == 1)
            #expect(try await updates.value == 1)

            // A sequence made after the close: its first fetch says why.
            let late = ModelContext(container)
            var it = late.results(of: openItems).makeAsyncIterator()
            await #expect(throws: StrataError.self) { _ = try await it.next() }
        }
    }

    @Test func inMemoryOrderIsFollowed() async throws {
        try await withAsyncContainer(for: [Person.self, Team.self]) { container in
            let context = ModelContext(container)
            for (f, l) in [("Ada", "Lovelace"), ("Grace", "Hopper")] {
                let p = Person()
                p.firstName = f
                p.lastName = l
                context.insert(p)
            }
            try context.save()
            var d = FetchDescriptor<Person>()
            d.inMemorySortBy = [InMemorySortDescriptor(\.fullName, ascending: false)]
            var it = context.results(of: d).makeAsyncIterator()
            #expect(try await it.next()?.map(\.fullName) == ["Grace Hopper", "Ada Lovelace"])
            let other = ModelContext(container)
            try other.fetch(FetchDescriptor<Person>(predicate: try FetchPredicate(format: "firstName == 'Ada'")))[0].firstName = "Zelda"
            try other.save()
            #expect(try await it.next()?.map(\.fullName) == ["Zelda Lovelace", "Grace Hopper"])
        }
    }
}
