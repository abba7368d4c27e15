import ArgumentParser
import Foundation
import Strata

/// Seed 002: every derived form the store maintains at save — a count and a sum over a
/// to-many, a copy through a to-one, `lowercase:`, `uppercase:`, `canonical:` and `now()`.
final class TodoList: ManagedObject {
    @Attribute var name: String
    @Relationship(deleteRule: .cascade, inverse: \TodoItem.list) var items: Set<TodoItem>
    @Derived("items.@count") var itemCount: Int64
    @Derived("items.amount.@sum") var total: Decimal
    @Derived("canonical:(name)", .indexed) var searchName: String
    @Derived("uppercase:(name)") var shoutedName: String
    @Derived("now()") var modified: Date?

    convenience init(name: String) {
        self.init()
        self.name = name
    }
}

final class TodoItem: ManagedObject {
    @Attribute var title: String
    @Attribute(default: 0) var amount: Decimal
    @Relationship var list: TodoList?
    @Derived("list.name") var listName: String?
    @Derived("lowercase:(title)") var lowerTitle: String

    convenience init(title: String, amount: Decimal) {
        self.init()
        self.title = title
        self.amount = amount
    }
}

struct TodoLists: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "todolist",
        abstract: "Derived attributes: count, sum, copy, lowercase, uppercase, canonical, now(); "
            + "moved items, a renamed list."
    )

    func run() throws {
        begin("todolist: derived attributes settled by the store at each save (seed 002)")
        try withStorePath("todo") { path in
            let container = try ModelContainer(for: [TodoList.self, TodoItem.self], path: path)
            defer { try? container.close() }
            let context = ModelContext(container)
            let groceries = TodoList(name: "Épicerie")
            let chores = TodoList(name: "Chores")
            context.insert(groceries)
            context.insert(chores)
            let milk = TodoItem(title: "Milk", amount: 2)
            let bread = TodoItem(title: "Bread", amount: Decimal(string: "3.5")!)
            let soap = TodoItem(title: "Soap", amount: 4)
            for item in [milk, bread, soap] { item.list = groceries }
            let start = Date()
            try context.save()
            say("3 items saved into \"Épicerie\"")
            try show("itemCount", groceries.itemCount, expected: 3)
            try show("total", groceries.total, expected: Decimal(string: "9.5")!)
            try show("searchName (canonical:)", groceries.searchName, expected: "epicerie")
            try show("shoutedName (uppercase:)", groceries.shoutedName, expected: "ÉPICERIE")
            try show("milk.lowerTitle (lowercase:)", milk.lowerTitle, expected: "milk")
            try show("milk.listName (copied through list)", milk.listName ?? "nil", expected: "Épicerie")
            let firstModified = groceries.modified ?? .distantPast
            try show("modified set by now() at the save", abs(firstModified.timeIntervalSince(start)) < 60,
                     expected: true)

            soap.list = chores
            try context.save()
            say("moved Soap to \"Chores\": both lists' count and sum move, nothing else is recounted")
            try show("Épicerie itemCount", groceries.itemCount, expected: 2)
            try show("Épicerie total", groceries.total, expected: Decimal(string: "5.5")!)
            try show("Chores itemCount", chores.itemCount, expected: 1)
            try show("soap.listName", soap.listName ?? "nil", expected: "Chores")

            groceries.name = "Groceries"
            try context.save()
            say("renamed \"Épicerie\" to \"Groceries\": its items' copies follow")
            try show("milk.listName", milk.listName ?? "nil", expected: "Groceries")
            try show("bread.listName", bread.listName ?? "nil", expected: "Groceries")
            try show("searchName", groceries.searchName, expected: "groceries")
            try show("modified moved forward", (groceries.modified ?? .distantPast) >= firstModified, expected: true)

            let found = try context.fetch(
                FetchDescriptor<TodoList>(predicate: PropertyPath(\TodoList.searchName).beginsWith("groc")))
            try show("fetched by searchName beginsWith \"groc\"", found.map(\.name), expected: ["Groceries"])
            try context.delete(chores)
            try context.save()
            say("deleted \"Chores\": its items go with it (cascade)")
            try show("items left", try context.fetchCount(FetchDescriptor<TodoItem>()), expected: 2)
        }
    }
}
