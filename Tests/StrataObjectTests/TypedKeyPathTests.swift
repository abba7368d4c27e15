import Foundation
import Strata
import Testing

/// Typed key paths of model classes in sorts and predicates.
@Suite struct TypedKeyPathTests {
    @Test func keyPathsNameTheirProperties() {
        #expect(ManagedObject.propertyPath(\Item.title) == "title")
        #expect(ManagedObject.propertyPath(\Item.list) == "list")
        #expect(ManagedObject.propertyPath(\Item.list?.name) == "list.name")
        #expect(ManagedObject.propertyPath(\Item.lowerTitle) == "lowerTitle")
        #expect(ManagedObject.propertyPath(\TodoList.items) == "items")
        #expect(ManagedObject.propertyPath(\Item.objectID) == nil)     // not a persistent property
        #expect(ManagedObject.propertyPath(\Invoice.total) == "total")
    }

    @Test func sortsAndPredicatesTakeKeyPaths() throws {
        try withContainer { container in
            let context = ModelContext(container)
            let home = TodoList(name: "Home"), work = TodoList(name: "Work")
            for (t, a, l) in [("b", 3, home), ("a", 9, work), ("c", 60, home), ("d", 70, work)] as [(String, Int, TodoList)] {
                let i = Item(title: t, amount: Decimal(a))
                i.list = l
            }
            context.insert(home)
            context.insert(work)
            try context.save()
            let byTitle = try context.fetch(FetchDescriptor<Item>(sortBy: [FetchSortDescriptor(\Item.title, ascending: false)]))
            #expect(byTitle.map(\.title) == ["d", "c", "b", "a"])
            let big = FetchDescriptor<Item>(predicate: PropertyPath(\Item.amount) > 50 && PropertyPath(\Item.list?.name) == "Home",
                                           sortBy: [FetchSortDescriptor(\Item.title)])
            #expect(try context.fetch(big).map(\.title) == ["c"])
            let lists = try context.fetch(FetchDescriptor<TodoList>(predicate: PropertyPath(\TodoList.itemCount) == 2,
                                                                   sortBy: [FetchSortDescriptor(\TodoList.searchName)]))
            #expect(lists == [home, work])
        }
    }
}
