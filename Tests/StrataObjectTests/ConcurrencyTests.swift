import Foundation
import Strata
import Testing

/// An actor owning a background context: imports items and hands back their identifiers.
actor ItemImporter {
    private let context: ModelContext

    init(container: ModelContainer) {
        context = ModelContext(container)
    }

    /// Inserts `count` items into the list `listID` names and saves; returns their identifiers.
    func importItems(_ count: Int, into listID: ManagedObjectID, batch: Int) throws -> [ManagedObjectID] {
        let list = try context.existingObject(with: listID, as: TodoList.self)
        let items = (0..<count).map { i in Item(title: "b\(batch)-\(i)", amount: Decimal(i)) }
        for item in items { item.list = list }
        try context.save()
        return items.map(\.objectID)
    }
}

/// Contexts in several isolation domains over one container: actors and tasks each with their
/// own context, identifiers crossing, a merging context seeing every save.
@Suite struct ConcurrencyTests {
    @Test func actorsAndTasksSaveConcurrentlyAndAMergingContextSeesEverySave() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-concurrency-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let container = try ModelContainer(for: [TodoList.self, Item.self], path: dir.appendingPathComponent("c.strata").path)
        defer { try? container.close() }

        let main = ModelContext(container)
        main.automaticallyMergesChangesFromStore = true
        let lists = (0..<3).map { TodoList(name: "list \($0)") }
        for l in lists { main.insert(l) }
        try main.save()
        let listIDs = lists.map(\.objectID)

        let importers = (0..<2).map { _ in ItemImporter(container: container) }
        let imported = try await withThrowingTaskGroup(of: [ManagedObjectID].self) { group in
            for batch in 0..<12 {
                let listID = listIDs[batch % listIDs.count]
                if batch % 3 == 2 {
                    // A plain task with a context of its own.
                    group.addTask {
                        let context = ModelContext(container)
                        let list = try context.existingObject(with: listID, as: TodoList.self)
                        let items = (0..<10).map { Item(title: "t\(batch)-\($0)", amount: 1) }
                        list.items.formUnion(items)
                        try context.save()
                        return items.map(\.objectID)
                    }
                } else {
                    let importer = importers[batch % importers.count]
                    group.addTask { try await importer.importItems(10, into: listID, batch: batch) }
                }
            }
            var all: [ManagedObjectID] = []
            for try await ids in group { all += ids }
            return all
        }
        #expect(imported.count == 120)
        #expect(Set(imported).count == 120 && imported.allSatisfy { !$0.isTemporaryID })

        main.processPendingChanges()
        for l in lists {
            #expect(l.itemCount == 40, "\(l.name)")
            #expect(l.items.count == 40)
        }
        let seen = try imported.map { try main.existingObject(with: $0, as: Item.self) }
        #expect(Set(seen.compactMap(\.list)).count == 3)
        #expect(try main.fetchCount(FetchDescriptor<Item>()) == 120)
    }
}
