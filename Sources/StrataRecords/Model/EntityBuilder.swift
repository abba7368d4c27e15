/// The declarations a model is written with, in a result builder:
///
/// ```swift
/// let model = try Model {
///     Entity("TodoList") {
///         Attribute("name", .string)
///         Relationship("items", toMany: "Item", inverse: "list", deleteRule: .cascade)
///         Derived("itemCount", .int64, "items.@count")
///         Derived("searchName", .string, "canonical:(name)")
///         FetchIndex("searchName")
///     }
///     Entity("Item") {
///         Attribute("amount", .decimal, default: 0)
///         Relationship("list", toOne: "TodoList", inverse: "items")
///         Derived("listName", .string, "list.name", optional: true)
///     }
/// }
/// ```

/// Collects an entity's declarations.
@resultBuilder
public enum EntityBuilder {
    /// Adds an attribute to the entity.
    public static func buildExpression(_ attribute: AttributeDescription) -> [EntityMember] {
        [EntityMember(kind: .attribute(attribute))]
    }
    /// Adds a relationship to the entity.
    public static func buildExpression(_ relationship: RelationshipDescription) -> [EntityMember] {
        [EntityMember(kind: .relationship(relationship))]
    }
    /// Adds a derived attribute to the entity.
    public static func buildExpression(_ derived: DerivedAttributeDescription) -> [EntityMember] {
        [EntityMember(kind: .derived(derived))]
    }
    /// Adds a uniqueness constraint to the entity.
    public static func buildExpression(_ unique: Unique) -> [EntityMember] { [EntityMember(kind: .unique(unique))] }
    /// Adds an index to the entity.
    public static func buildExpression(_ index: FetchIndex) -> [EntityMember] { [EntityMember(kind: .index(index))] }
    /// Adds a word index.
    public static func buildExpression(_ index: FullTextIndex) -> [EntityMember] { [EntityMember(kind: .fullText(index))] }
    /// The declarations of a block, in order.
    public static func buildBlock(_ parts: [EntityMember]...) -> [EntityMember] { parts.flatMap { $0 } }
    /// The declarations of an `if` without `else`: none when the condition is false.
    public static func buildOptional(_ part: [EntityMember]?) -> [EntityMember] { part ?? [] }
    /// The declarations of the first branch of an `if`/`else` or `switch`, when it is taken.
    public static func buildEither(first: [EntityMember]) -> [EntityMember] { first }
    /// The declarations of the second branch of an `if`/`else` or `switch`, when it is taken.
    public static func buildEither(second: [EntityMember]) -> [EntityMember] { second }
    /// The declarations of a `for` loop, every iteration's in order.
    public static func buildArray(_ parts: [[EntityMember]]) -> [EntityMember] { parts.flatMap { $0 } }
}
