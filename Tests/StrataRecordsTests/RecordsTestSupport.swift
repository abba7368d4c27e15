import Foundation
import Testing
import StrataStorage
@testable import StrataRecords
// Re-exported to every file of this test target: the simulated file system and the seeded
// generator moved to the StrataTesting target, and the suites keep using them by name.
@_exported import StrataTesting

/// A fresh in-memory store (simulated file system) for one test.
func makeStore(_ model: Model, fs: SimulatedFileSystem = SimulatedFileSystem(), path: String = "/db/records.strata") throws -> RecordStore {
    var o = StoreOptions(durability: .normal)
    o.fileSystem = fs
    o.syncIntervalMilliseconds = 3_600_000
    o.compactOnCloseGarbageRatio = 1
    return try RecordStore(path: path, model: model, options: o)
}

/// The benchmark's and the issue's model: every derived form at least once.
func todoModel() throws -> Model {
    try Model {
        Entity("TodoList") {
            Attribute("name", .string)
            Attribute("budget", .decimal, default: Decimal(0))
            Relationship("items", toMany: "Item", inverse: "list", deleteRule: .cascade)
            Relationship("tags", toMany: "Tag", inverse: "lists")
            Derived("itemCount", .int64, "items.@count")
            Derived("total", .decimal, "items.amount.@sum")
            Derived("weightSum", .double, "items.weight.@sum")
            Derived("averageAmount", .decimal, "items.amount.@avg", optional: true)
            Derived("averageWeight", .double, "items.weight.@avg", optional: true)
            Derived("cheapest", .decimal, "items.amount.@min", optional: true)
            Derived("dearest", .decimal, "items.amount.@max", optional: true)
            Derived("lineSum", .decimal, "items.lineTotal.@sum")
            Derived("quantitySum", .int64, "items.quantity.@sum")
            Derived("searchName", .string, "canonical:(name)")
            Derived("loudName", .string, "uppercase:(name)")
            Derived("tagCount", .int64, "tags.@count")
            Derived("modified", .date, "now()")
            FetchIndex("searchName")
        }
        Entity("Item") {
            Attribute("title", .string)
            Attribute("amount", .decimal, default: Decimal(0))
            Attribute("quantity", .int32, default: 1)
            Attribute("weight", .double, optional: true)
            Relationship("list", toOne: "TodoList", inverse: "items")
            Derived("listName", .string, "list.name", optional: true)
            Derived("listSearch", .string, "list.searchName", optional: true)
            Derived("lowerTitle", .string, "lowercase:(title)")
            Derived("lineTotal", .decimal, "amount * quantity")
            FetchIndex("title")
        }
        Entity("Tag") {
            Attribute("label", .string)
            Attribute("score", .int64, default: 0)
            Relationship("lists", toMany: "TodoList", inverse: "tags")
            Derived("listCount", .int64, "lists.@count")
            Derived("listItemTotal", .int64, "lists.itemCount.@sum")
            Unique("label")
        }
    }
}

extension RecordStore {
    /// One property of one object, read in its own snapshot.
    func value(_ property: String, of id: ObjectID) throws -> Value {
        try read { try $0.value(property, of: id) }
    }
}

/// Records an issue for every problem `checkRecords()` finds (indexes, inverses, derived values).
func expectConsistent(_ store: RecordStore, _ label: String = "", sourceLocation: SourceLocation = #_sourceLocation) throws {
    let problems = try store.read { try $0.checkRecords() }
    for p in problems { Issue.record("\(label) \(p)", sourceLocation: sourceLocation) }
}
