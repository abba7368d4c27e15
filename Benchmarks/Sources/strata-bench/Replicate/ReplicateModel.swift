import Foundation
import StrataRecords

/// The record-layer model the `replicate` benchmark writes and pushes: what an app's store
/// holds, small enough to read at a glance.
///
/// - `TodoList`: `name`; to-many `items` (cascade); derived `itemCount = items.@count` and
///   `total = items.amount.@sum`, so an item's insert, move or amount change also changes its
///   list's row (the replicator pushes derived columns like any other).
/// - `Item`: `title`, `amount` (decimal), `quantity`; to-one `list` (a foreign key in
///   PostgreSQL); many-to-many `tags`.
/// - `Tag`: `label`; many-to-many `items` (a join table in PostgreSQL). No derived count: a
///   hundred tags counted by every link would be a few rows every batch rewrites, and the
///   benchmark keeps the rows a batch writes mostly distinct.
enum ReplicateModel {
    static func model() throws -> Model {
        try Model {
            Entity("TodoList") {
                AttributeDescription("name", .string)
                RelationshipDescription("items", toMany: "Item", inverse: "list", deleteRule: .cascade)
                DerivedAttributeDescription("itemCount", .int64, "items.@count")
                DerivedAttributeDescription("total", .decimal, "items.amount.@sum")
            }
            Entity("Item") {
                AttributeDescription("title", .string)
                AttributeDescription("amount", .decimal, default: Decimal(0))
                AttributeDescription("quantity", .int32, default: 1)
                RelationshipDescription("list", toOne: "TodoList", inverse: "items")
                RelationshipDescription("tags", toMany: "Tag", inverse: "items")
            }
            Entity("Tag") {
                AttributeDescription("label", .string)
                RelationshipDescription("items", toMany: "Item", inverse: "tags")
            }
        }
    }

    /// The join table of `Item.tags`/`Tag.items` in PostgreSQL: named after the side that sorts
    /// first (decision 62).
    static let linkTable = "Item_tags"

    /// The store's configuration line in the report.
    static let configuration = "store: RecordStore, durability .normal, sharing .shared (strata replicate opens it "
        + "read-only beside the writer), persistent history on; TodoList.itemCount = items.@count, "
        + "total = items.amount.@sum; Item.list (to-one), Item.tags ↔ Tag.items (many-to-many)"
}
