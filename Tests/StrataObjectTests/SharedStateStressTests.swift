import Foundation
import Strata
import Synchronization
import Testing

// Classes no other test uses: their schemas are built for the first time by the stress test's
// tasks, concurrently with each other and with the container that is opened for them.

final class Shelf: ManagedObject {
    @Attribute var label: String
    @Relationship(deleteRule: .cascade, inverse: \Book.shelf) var books: Set<Book>
    @Derived("books.@count") var bookCount: Int64
}

final class Book: ManagedObject {
    @Attribute var title: String
    @Attribute(default: 0) var pages: Int64
    @Relationship var shelf: Shelf?
    @Relationship(inverse: \Reader.books) var readers: Set<Reader>
    @Derived("shelf.label") var shelfLabel: String?
}

final class Reader: ManagedObject {
    @Attribute var name: String
    @Relationship var books: Set<Book>
}

/// Shared between the stress test's tasks.
final class StressCounters: Sendable {
    let saves = Atomic<Int>(0)
    let stop = Atomic<Bool>(false)
}

/// The object layer's process-wide shared state under many tasks at once (run it under Thread
/// Sanitizer, docs/reliability.md): schemas built on first use of a class, the key-path caches
/// (storage slots, typed key-path names, declared inverses), the container's save observers
/// and the inboxes of contexts that merge automatically.
@Suite struct SharedStateStressTests {
    static let tasks = 8
    static let rounds = 24
    static let booksPerTask = 6

    @Test func firstUseOfClassesKeyPathsAndMergesFromManyTasksAtOnce() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-stress-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("s.strata").path
        // Opened while the tasks below build the same classes' schemas.
        let opening = Task { try ModelContainer(for: [Shelf.self, Book.self, Reader.self], path: path) }

        let counters = StressCounters()
        let results = try await withThrowingTaskGroup(of: (Int, [ManagedObjectID]).self) { group in
            for t in 0..<Self.tasks {
                group.addTask {
                    // First use, detached: schemas, slots of storage key paths, the declared
                    // inverse (a probe prototype) and typed key-path names, all at once.
                    let shelf = Shelf()
                    shelf.label = "shelf \(t)"
                    let books = (0..<Self.booksPerTask).map { i in
                        let b = Book()
                        b.title = "t\(t)-b\(i)"
                        b.pages = Int64(i)
                        b.shelf = shelf
                        return b
                    }
                    #expect(shelf.books.count == Self.booksPerTask)
                    #expect(ManagedObject.propertyPath(\Book.shelf?.label) == "shelf.label")
                    #expect(ManagedObject.propertyPath(\Shelf.bookCount) == "bookCount")
                    #expect(ManagedObject.propertyPath(\Reader.books) == "books")

                    let container = try await opening.value
                    if t == 0 {
                        container.addSaveObserver { _ in counters.saves.add(1, ordering: .relaxed) }
                    }
                    let context = ModelContext(container)
                    context.automaticallyMergesChangesFromStore = t % 2 == 0
                    context.insert(shelf)
                    try context.save()
                    for round in 0..<Self.rounds {
                        // Typed key paths resolved by every task (equal key paths share a cache entry).
                        let least = Int64(round % Self.booksPerTask)
                        let d = FetchDescriptor<Book>(predicate: PropertyPath(\Book.pages) >= least && PropertyPath(\Book.shelf?.label) == "shelf \(t)",
                                                      sortBy: [FetchSortDescriptor(\Book.title)])
                        let mine = try context.fetch(d)
                        #expect(mine.count == books.filter { $0.pages >= least }.count, "task \(t) round \(round)")
                        #expect(mine.map(\.title) == mine.map(\.title).sorted())
                        let book = books[round % books.count]
                        book.pages += Int64(Self.booksPerTask)
                        if round == 1 {
                            // Many-to-many links to one reader every task shares.
                            let readers = try context.fetch(FetchDescriptor<Reader>(predicate: PropertyPath(\Reader.name) == "everyone"))
                            let reader: Reader
                            if let r = readers.first { reader = r } else { reader = Reader(); reader.name = "everyone"; context.insert(reader) }
                            book.readers.insert(reader)
                        }
                        try context.save()
                        context.processPendingChanges()
                        #expect(shelf.bookCount == Int64(Self.booksPerTask))
                    }
                    return (t, books.map(\.objectID))
                }
            }
            // A context that merges every save while they happen, in a task of its own.
            group.addTask {
                let container = try await opening.value
                let watcher = ModelContext(container)
                watcher.automaticallyMergesChangesFromStore = true
                var merged = 0
                while !counters.stop.load(ordering: .relaxed) {
                    watcher.processPendingChanges()
                    let shelves = try watcher.fetch(FetchDescriptor<Shelf>(sortBy: [FetchSortDescriptor(\Shelf.label)]))
                    merged += shelves.reduce(0) { $0 + Int($1.bookCount) }
                    await Task.yield()
                }
                _ = merged
                return (-1, [])
            }
            var out: [Int: [ManagedObjectID]] = [:]
            for try await (t, ids) in group where t >= 0 {
                out[t] = ids
                if out.count == Self.tasks { counters.stop.store(true, ordering: .relaxed) }
            }
            return out
        }
        let container = try await opening.value
        defer { try? container.close() }
        #expect(results.count == Self.tasks)
        #expect(counters.saves.load(ordering: .relaxed) >= Self.rounds + 1)

        let check = ModelContext(container)
        let shelves = try check.fetch(FetchDescriptor<Shelf>(sortBy: [FetchSortDescriptor(\Shelf.label)]))
        #expect(shelves.map(\.label) == (0..<Self.tasks).map { "shelf \($0)" })
        #expect(shelves.allSatisfy { $0.bookCount == Int64(Self.booksPerTask) && $0.books.count == Self.booksPerTask })
        let pagesBefore = (0..<Self.booksPerTask).reduce(0) { $0 + $1 } * Self.tasks
        let added = Self.tasks * Self.rounds * Self.booksPerTask
        let books = try check.fetch(FetchDescriptor<Book>())
        #expect(books.count == Self.tasks * Self.booksPerTask)
        #expect(books.reduce(0) { $0 + Int($1.pages) } == pagesBefore + added)
        let linked = books.reduce(0) { $0 + $1.readers.count }
        #expect(linked == Self.tasks)
        for (t, ids) in results {
            for id in ids { #expect(try check.existingObject(with: id, as: Book.self).shelfLabel == "shelf \(t)") }
        }
    }
}
