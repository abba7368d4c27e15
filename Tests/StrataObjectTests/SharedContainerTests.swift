import Foundation
import Strata
import Synchronization
import Testing

/// Two containers on one store shared between processes (`StoreOptions.sharing`): two handles
/// in one process exclude each other's writes as two processes do, so each plays "the other
/// process" for the other. Their commits come to the other's contexts from the history.
@Suite struct SharedContainerTests {
    static var sharedOptions: StoreOptions {
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared(lockTimeout: .seconds(5))
        return options
    }

    static func pair(_ path: String) throws -> (ModelContainer, ModelContainer) {
        (try ModelContainer(for: [TodoList.self, Item.self], path: path, options: sharedOptions),
         try ModelContainer(for: [TodoList.self, Item.self], path: path, options: sharedOptions))
    }

    @Test func anotherProcessesSaveIsMergedAndAnnounced() throws {
        try withStorePath { path in
            let (app, widget) = try Self.pair(path)
            defer { try? app.close(); try? widget.close() }
            let editor = ModelContext(app)
            let home = TodoList(name: "Home")
            editor.insert(home)
            try editor.save()

            let viewer = ModelContext(widget)
            viewer.automaticallyMergesChangesFromStore = true
            let seenHome = try #require(try viewer.fetch(FetchDescriptor<TodoList>()).first)
            #expect(seenHome.itemCount == 0)
            let told = Mutex<[SaveNotification]>([])
            widget.addSaveObserver { notification in told.withLock { $0.append(notification) } }

            let item = Item(title: "Milk", amount: 3)
            item.list = home
            editor.insert(item)
            home.name = "House"
            try editor.save()
            // The widget's next fetch takes the app's commit in: objects it holds are refreshed.
            let items = try viewer.fetch(FetchDescriptor<Item>())
            #expect(items.map(\.title) == ["Milk"])
            #expect(seenHome.name == "House" && seenHome.itemCount == 1 && seenHome.total == 3)
            let notifications = told.withLock { $0 }
            #expect(notifications.count == 1)
            #expect(notifications.first?.isFromAnotherProcess == true)
            #expect(notifications.first?.insertedIDs.count == 1)
            // And the other way round, into a context with unsaved changes kept on top.
            let editorItem = try #require(try editor.fetch(FetchDescriptor<Item>()).first)
            editorItem.done = true
            let widgetItem = try #require(items.first)
            widgetItem.amount = 10
            try viewer.save()
            editor.automaticallyMergesChangesFromStore = true
            editor.processPendingChanges()
            #expect(editorItem.amount == 10 && editorItem.done && home.total == 10)
            try editor.save()
            #expect(try viewer.fetch(FetchDescriptor<Item>()).first?.done == true)
        }
    }

    @Test func aContextThatDoesNotMergeTreatsAnotherProcessLikeAnotherContext() throws {
        try withStorePath { path in
            let (app, widget) = try Self.pair(path)
            defer { try? app.close(); try? widget.close() }
            let editor = ModelContext(app)
            // Its object of the list is stale once the neighbour saved: the store's values win.
            editor.mergePolicy = .mergeByPropertyObjectTrump
            let list = TodoList(name: "Old")
            editor.insert(list)
            try editor.save()
            let viewer = ModelContext(widget)
            let seen = try #require(try viewer.fetch(FetchDescriptor<TodoList>()).first)
            #expect(seen.name == "Old")
            // A save of another context of the same process, then one of the other process: a
            // fetch that does not merge leaves a loaded object alone after either.
            let neighbour = ModelContext(widget)
            try #require(try neighbour.fetch(FetchDescriptor<TodoList>()).first).name = "Neighbour"
            try neighbour.save()
            _ = try viewer.fetch(FetchDescriptor<TodoList>())
            let afterNeighbour = seen.name
            list.name = "New"
            try editor.save()
            _ = try viewer.fetch(FetchDescriptor<TodoList>())
            #expect(seen.name == afterNeighbour)
            viewer.refreshAllObjects()
            #expect(seen.name == "New")
        }
    }

    @Test func aWaitingProgramWakesWhenAnotherProcessCommits() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-shared-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let (app, widget) = try Self.pair(dir.appendingPathComponent("s.strata").path)
        defer { try? app.close(); try? widget.close() }
        #expect(try await widget.waitForOtherProcessCommits(timeout: .milliseconds(30)) == false)
        let writer = Task.detached {
            try await Task.sleep(for: .milliseconds(50))
            let context = ModelContext(app)
            context.insert(TodoList(name: "From the app"))
            try context.save()
        }
        #expect(try await widget.waitForOtherProcessCommits(timeout: .seconds(10)))
        try await writer.value
        let context = ModelContext(widget)
        #expect(try context.fetch(FetchDescriptor<TodoList>()).map(\.name) == ["From the app"])
    }

    @Test func fetchResultsYieldWhenAnotherProcessSaves() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-shared-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let (app, widget) = try Self.pair(dir.appendingPathComponent("s.strata").path)
        defer { try? app.close(); try? widget.close() }
        let context = ModelContext(widget)
        var results = context.results(of: FetchDescriptor<TodoList>(sortBy: [FetchSortDescriptor("name")]))
            .makeAsyncIterator()
        #expect(try await results.next()?.isEmpty == true)
        let writer = Task.detached {
            try await Task.sleep(for: .milliseconds(50))
            let other = ModelContext(app)
            other.insert(TodoList(name: "Groceries"))
            try other.save()
        }
        let next = try await results.next()
        #expect(next?.map(\.name) == ["Groceries"])
        try await writer.value
    }
}
