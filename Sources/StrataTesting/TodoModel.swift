import Foundation
import StrataRecords
import StrataStorage

/// A `TodoList`/`Item` model with every derived form at least once, plus `Tag` for a
/// many-to-many relationship and a uniqueness constraint: the model of the record layer's
/// model-based, crash and fuzz tests.
///
/// - `TodoList`: `name`, `budget`; to-many `items` (cascade) and many-to-many `tags`; derived
///   `@count`, decimal and double `@sum`, `@avg`, `@min`, `@max`, a sum over a derived child
///   value, `canonical:` (indexed), `uppercase:` and `now()`.
/// - `Item`: `title` (indexed), `amount`, `quantity`, optional `weight`; to-one `list`; copies
///   through the to-one (of a stored and of a derived value), `lowercase:`, arithmetic; a word
///   index over the title and the list's name.
/// - `Tag`: `label` (unique), `score`; many-to-many `lists`; a count and a sum over a derived value.
package func todoModel() throws -> Model { try Model(entities: todoEntities()) }

/// The entities of ``todoModel()``, for models built from it (the migration crash rounds' later
/// versions).
@ModelBuilder
package func todoEntities() -> [Entity] {
    Entity("TodoList") {
        AttributeDescription("name", .string)
        AttributeDescription("budget", .decimal, default: Decimal(0))
        RelationshipDescription("items", toMany: "Item", inverse: "list", deleteRule: .cascade)
        RelationshipDescription("tags", toMany: "Tag", inverse: "lists")
        DerivedAttributeDescription("itemCount", .int64, "items.@count")
        DerivedAttributeDescription("total", .decimal, "items.amount.@sum")
        DerivedAttributeDescription("weightSum", .double, "items.weight.@sum")
        DerivedAttributeDescription("averageAmount", .decimal, "items.amount.@avg", optional: true)
        DerivedAttributeDescription("averageWeight", .double, "items.weight.@avg", optional: true)
        DerivedAttributeDescription("cheapest", .decimal, "items.amount.@min", optional: true)
        DerivedAttributeDescription("dearest", .decimal, "items.amount.@max", optional: true)
        DerivedAttributeDescription("lineSum", .decimal, "items.lineTotal.@sum")
        DerivedAttributeDescription("quantitySum", .int64, "items.quantity.@sum")
        DerivedAttributeDescription("searchName", .string, "canonical:(name)")
        DerivedAttributeDescription("loudName", .string, "uppercase:(name)")
        DerivedAttributeDescription("tagCount", .int64, "tags.@count")
        DerivedAttributeDescription("modified", .date, "now()")
        FetchIndex("searchName")
    }
    Entity("Item") {
        AttributeDescription("title", .string)
        AttributeDescription("amount", .decimal, default: Decimal(0))
        AttributeDescription("quantity", .int32, default: 1)
        AttributeDescription("weight", .double, optional: true)
        RelationshipDescription("list", toOne: "TodoList", inverse: "items")
        DerivedAttributeDescription("listName", .string, "list.name", optional: true)
        DerivedAttributeDescription("listSearch", .string, "list.searchName", optional: true)
        DerivedAttributeDescription("lowerTitle", .string, "lowercase:(title)")
        DerivedAttributeDescription("lineTotal", .decimal, "amount * quantity")
        FetchIndex("title")
        // Words of an item's own title and of its list's name (a copy through the to-one, so
        // renaming a list moves its items' postings).
        FullTextIndex("title", "listName")
    }
    Entity("Tag") {
        AttributeDescription("label", .string)
        AttributeDescription("score", .int64, default: 0)
        RelationshipDescription("lists", toMany: "TodoList", inverse: "tags")
        DerivedAttributeDescription("listCount", .int64, "lists.@count")
        DerivedAttributeDescription("listItemTotal", .int64, "lists.itemCount.@sum")
        Unique("label")
    }
}

/// A fresh record store for one test on a simulated file system (`normal` durability, no timer
/// syncs, no compaction on close), at `path` in `fs`.
package func makeStore(_ model: Model, fs: SimulatedFileSystem = SimulatedFileSystem(),
                       path: String = "/db/records.strata",
                       history: HistoryRecording = .asStored) throws -> RecordStore {
    var options = StoreOptions(durability: .normal)
    options.fileSystem = fs
    options.syncIntervalMilliseconds = 3_600_000
    options.compactOnCloseGarbageRatio = 1
    return try RecordStore(path: path, model: model, options: options, history: history)
}
