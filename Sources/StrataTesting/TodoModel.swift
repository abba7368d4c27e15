import Foundation
import StrataRecords
import StrataStorage

/// The issue's `TodoList`/`Item` model with every derived form at least once, plus `Tag` for a
/// many-to-many relationship and a uniqueness constraint: the model of the record layer's
/// model-based, crash and fuzz tests.
///
/// - `TodoList`: `name`, `budget`; to-many `items` (cascade) and many-to-many `tags`; derived
///   `@count`, decimal and double `@sum`, `@avg`, `@min`, `@max`, a sum over a derived child
///   value, `canonical:` (indexed), `uppercase:` and `now()`.
/// - `Item`: `title` (indexed), `amount`, `quantity`, optional `weight`; to-one `list`; copies
///   through the to-one (of a stored and of a derived value), `lowercase:`, arithmetic.
/// - `Tag`: `label` (unique), `score`; many-to-many `lists`; a count and a sum over a derived value.
package func todoModel() throws -> Model {
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

/// A fresh record store for one test on a simulated file system (`normal` durability, no timer
/// syncs, no compaction on close), at `path` in `fs`.
package func makeStore(_ model: Model, fs: SimulatedFileSystem = SimulatedFileSystem(), path: String = "/db/records.strata") throws -> RecordStore {
    var o = StoreOptions(durability: .normal)
    o.fileSystem = fs
    o.syncIntervalMilliseconds = 3_600_000
    o.compactOnCloseGarbageRatio = 1
    return try RecordStore(path: path, model: model, options: o)
}
