import Foundation
import Strata
import Testing

final class TodoList: ManagedObject {
    @Attribute var name: String
    @Relationship(deleteRule: .cascade, inverse: \Item.list) var items: Set<Item>
    @Derived("items.@count") var itemCount: Int64
    @Derived("items.amount.@sum") var total: Decimal
    @Derived("canonical:(name)", .indexed) var searchName: String

    convenience init(name: String) {
        self.init()
        self.name = name
    }
}

final class Item: ManagedObject {
    @Attribute var title: String
    @Attribute(default: 0) var amount: Decimal
    @Attribute(default: false) var done: Bool
    @Relationship var list: TodoList?
    @Derived("list.name") var listName: String?
    @Derived("lowercase:(title)") var lowerTitle: String

    convenience init(title: String, amount: Decimal = 0) {
        self.init()
        self.title = title
        self.amount = amount
    }
}

/// A store path in a fresh temporary directory, removed afterwards.
func withStorePath<T>(_ body: (String) throws -> T) throws -> T {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-objects-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    return try body(dir.appendingPathComponent("todo.strata").path)
}

/// A container over a fresh store, closed afterwards.
func withContainer<T>(_ body: (ModelContainer) throws -> T) throws -> T {
    try withStorePath { path in
        let container = try ModelContainer(for: [TodoList.self, Item.self], path: path)
        defer { try? container.close() }
        return try body(container)
    }
}

@Suite struct ObjectLayerTests {
    @Test func detachedGraphInsertsAndDerivedValuesShowAfterSave() throws {
        try withContainer { container in
            let context = ModelContext(container)
            let list = TodoList(name: "Groceries")
            let milk = Item(title: "Milk", amount: 2)
            milk.list = list                       // both in no context yet
            #expect(list.items == [milk])
            context.insert(list)                   // the graph follows
            #expect(milk.context === context)
            #expect(list.objectID.isTemporaryID)
            let bread = Item(title: "Bread", amount: Decimal(string: "3.5")!)
            list.items.insert(bread)               // bread joins through the relationship
            #expect(bread.list === list)
            try context.save()
            #expect(!list.objectID.isTemporaryID)
            #expect(list.itemCount == 2)
            #expect(list.total == Decimal(string: "5.5")!)
            #expect(list.searchName == "groceries")
            #expect(milk.listName == "Groceries")
            #expect(milk.lowerTitle == "milk")
            #expect(!context.hasChanges)
        }
    }

    @Test func fetchReturnsUniquedFaultsAndStateCallsDoNotFireThem() throws {
        try withContainer { container in
            let writer = ModelContext(container)
            let list = TodoList(name: "Home")
            writer.insert(list)
            for i in 0..<5 { list.items.insert(Item(title: "t\(i)", amount: Decimal(i))) }
            try writer.save()
            let id = list.objectID

            let reader = ModelContext(container)
            let lists = try reader.fetch(FetchDescriptor<TodoList>())
            #expect(lists.count == 1)
            let l = lists[0]
            #expect(l.isFault)
            _ = l.objectID; _ = l.context; _ = l.entityName; _ = l.isInserted; _ = l.isUpdated; _ = l.isDeleted
            _ = l.faultingState; _ = l.hasChanges; _ = l.hashValue; _ = l == l; _ = l.description
            #expect(l.isFault)
            #expect(reader.statistics.faultsFired == 0)
            #expect(try reader.object(with: id) === l)
            #expect(l.itemCount == 5)
            #expect(reader.statistics.faultsFired == 1)
            // To-many members come back as faults: counting them reads no member row.
            #expect(l.items.count == 5)
            #expect(reader.statistics.faultsFired == 1)
            let first = l.items.first!
            #expect(first.list === l)
        }
    }

    @Test func changesSnapshotsAndRollback() throws {
        try withContainer { container in
            let context = ModelContext(container)
            let item = Item(title: "Tea")
            context.insert(item)
            try context.save()
            item.title = "Green tea"
            #expect(item.isUpdated)
            #expect(context.updatedObjects == [item])
            context.rollback()
            #expect(item.title == "Tea")
            #expect(!item.isUpdated)
        }
    }

    @Test func optimisticLockingConflictsFollowTheMergePolicy() throws {
        try withContainer { container in
            let a = ModelContext(container)
            let item = Item(title: "Coffee")
            a.insert(item)
            try a.save()
            let b = ModelContext(container)
            let other = try b.existingObject(with: item.objectID, as: Item.self)
            other.title = "Espresso"
            try b.save()

            item.title = "Latte"
            do {
                try a.save()
                Issue.record("expected a conflict")
            } catch StrataError.mergeConflicts(let list) {
                #expect(list.count == 1)
                #expect(list[0].properties == ["title"])
                #expect(list[0].persisted?["title"] == "\"Espresso\"")
            }
            #expect(a.hasChanges)  // the context keeps its changes
            a.mergePolicy = .mergeByPropertyObjectTrump
            try a.save()
            let c = ModelContext(container)
            #expect(try c.existingObject(with: item.objectID, as: Item.self).title == "Latte")
        }
    }

    @Test func otherContextsMergeSavesIncludingDerivedValues() throws {
        try withContainer { container in
            let a = ModelContext(container)
            let list = TodoList(name: "Work")
            a.insert(list)
            try a.save()
            let b = ModelContext(container)
            b.automaticallyMergesChangesFromStore = true
            let seen = try b.existingObject(with: list.objectID, as: TodoList.self)
            #expect(seen.itemCount == 0)
            list.items.insert(Item(title: "Report", amount: 10))
            try a.save()
            b.processPendingChanges()
            #expect(seen.itemCount == 1)
            #expect(seen.total == 10)
        }
    }

    @Test func misuseIsATypedErrorNotATrap() throws {
        try withContainer { container in
            let a = ModelContext(container)
            let b = ModelContext(container)
            let list = TodoList(name: "A")
            a.insert(list)
            let item = Item(title: "x")
            b.insert(item)
            item.list = list                          // another context's object
            #expect(throws: StrataError.self) { try b.save() }
            try a.save()
            try a.delete(list)
            list.name = "changed after delete"
            #expect(throws: StrataError.self) { try a.save() }
        }
        try withStorePath { path in
            let container = try ModelContainer(for: [TodoList.self, Item.self], path: path)
            let context = ModelContext(container)
            context.insert(TodoList(name: "late"))
            try container.close()
            #expect(throws: StrataError.self) { try context.save() }
        }
    }

    @Test func fetchSeesPendingChangesAndDeletedObjectsLeaveRelationships() throws {
        try withContainer { container in
            let context = ModelContext(container)
            let list = TodoList(name: "Trip")
            context.insert(list)
            let tent = Item(title: "Tent", amount: 100)
            let map = Item(title: "Map", amount: 5)
            list.items = [tent, map]
            var d = FetchDescriptor<Item>(predicate: try FetchPredicate(format: "amount > 50"))
            #expect(try context.fetch(d) == [tent])
            try context.save()
            try context.delete(map)
            #expect(list.items == [tent])
            d.predicate = nil
            #expect(try context.fetchCount(d) == 1)
            try context.save()
            #expect(list.itemCount == 1)
            #expect(map.isDeleted)
        }
    }
}

/// A context pinned to a query generation reads one commit until it saves or unpins.
@Suite struct QueryGenerationTests {
    @Test func aPinnedContextReadsOneCommit() throws {
        try withContainer { container in
            let writer = ModelContext(container)
            let list = TodoList(name: "Pinned")
            writer.insert(list)
            try writer.save()
            let reader = ModelContext(container)
            try reader.pinQueryGeneration()
            let generation = try #require(reader.queryGeneration)
            list.items.insert(Item(title: "new"))
            list.name = "Moved on"
            try writer.save()
            let seen = try reader.existingObject(with: list.objectID, as: TodoList.self)
            #expect(seen.name == "Pinned" && seen.itemCount == 0 && seen.items.isEmpty)
            #expect(try reader.fetchCount(FetchDescriptor<Item>()) == 0)
            #expect(reader.queryGeneration == generation)
            reader.unpinQueryGeneration()
            #expect(reader.queryGeneration == nil)
            reader.refresh(seen, mergeChanges: false)
            #expect(seen.name == "Moved on" && seen.itemCount == 1 && seen.items.count == 1)
        }
    }
}
