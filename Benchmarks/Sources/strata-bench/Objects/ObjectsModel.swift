import Strata

// The objects benchmark's model as the object layer declares it: a list with a to-many of
// items, an indexed `sku`. Only `Strata` is imported here: the record layer's model DSL also
// names `AttributeDescription` and `RelationshipDescription`.

/// A list of items (entity `TodoList`, as in the record layer's model).
final class BenchList: ManagedObject {
    override class var entityName: String { "TodoList" }

    @Attribute var name: String
    /// An array, as SwiftData declares to-many relationships (members in primary-key order).
    @Relationship(deleteRule: .cascade, inverse: \BenchItem.list) var items: [BenchItem]

    convenience init(name: String) {
        self.init()
        self.name = name
    }
}

/// An item of a list (entity `Item`).
final class BenchItem: ManagedObject {
    override class var entityName: String { "Item" }

    @Attribute var title: String
    @Attribute(.indexed) var sku: String
    @Attribute(default: 0) var amount: Int64
    @Attribute(default: false) var done: Bool
    @Relationship var list: BenchList?

    convenience init(title: String, sku: String, amount: Int64, done: Bool) {
        self.init()
        self.title = title
        self.sku = sku
        self.amount = amount
        self.done = done
    }
}
