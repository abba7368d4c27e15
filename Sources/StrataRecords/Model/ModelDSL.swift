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

/// A stored (or, with `transient: true`, a modelled but never stored) attribute.
public struct Attribute: Sendable {
    public var name: String
    public var type: AttributeType
    public var isOptional: Bool
    public var defaultValue: Value?
    public var isTransient: Bool
    public var validation: [ValidationRule]
    /// The attribute's name in the previous model version, for a lightweight migration.
    public var renamingIdentifier: String?

    public init(_ name: String, _ type: AttributeType, optional: Bool = false, default defaultValue: ValueConvertible? = nil,
                transient: Bool = false, validation: [ValidationRule] = [], renamedFrom: String? = nil) {
        self.name = name
        self.type = type
        self.isOptional = optional
        self.defaultValue = defaultValue?.strataValue
        self.isTransient = transient
        self.validation = validation
        self.renamingIdentifier = renamedFrom
    }
}

/// A relationship: to-one (stored in the row), to-many (answered by an index on the inverse
/// to-one), or many-to-many (both sides to-many: a join tree). Every relationship names its
/// inverse; the record layer keeps both sides consistent.
public struct Relationship: Sendable {
    public var name: String
    public var target: String
    public var isToMany: Bool
    public var inverse: String
    public var deleteRule: DeleteRule
    public var isOptional: Bool
    public var renamingIdentifier: String?

    /// A to-one relationship to `target`.
    public init(_ name: String, toOne target: String, inverse: String, deleteRule: DeleteRule = .nullify,
                optional: Bool = true, renamedFrom: String? = nil) {
        self.name = name
        self.target = target
        self.isToMany = false
        self.inverse = inverse
        self.deleteRule = deleteRule
        self.isOptional = optional
        self.renamingIdentifier = renamedFrom
    }

    /// A to-many relationship to `target`.
    public init(_ name: String, toMany target: String, inverse: String, deleteRule: DeleteRule = .nullify,
                renamedFrom: String? = nil) {
        self.name = name
        self.target = target
        self.isToMany = true
        self.inverse = inverse
        self.deleteRule = deleteRule
        self.isOptional = true
        self.renamingIdentifier = renamedFrom
    }
}

/// An attribute the store computes at commit from `expression`; callers cannot set it.
///
/// Expressions: `list.name` (copy through to-one hops), `lowercase:(name)`,
/// `uppercase:(name)`, `canonical:(name)`, `items.@count`, `items.amount.@sum` (also `@avg`,
/// `@min`, `@max`), `now()`, and arithmetic `+ - * /` over numbers of the row and its to-one
/// targets (`price * quantity`).
public struct Derived: Sendable {
    public var name: String
    public var type: AttributeType
    public var expression: String
    public var isOptional: Bool
    public var renamingIdentifier: String?

    public init(_ name: String, _ type: AttributeType, _ expression: String, optional: Bool = false, renamedFrom: String? = nil) {
        self.name = name
        self.type = type
        self.expression = expression
        self.isOptional = optional
        self.renamingIdentifier = renamedFrom
    }
}

/// A uniqueness constraint over one or more stored attributes (or to-one relationships).
public struct Unique: Sendable {
    public var properties: [String]
    public init(_ properties: String...) { self.properties = properties }
}

/// An index over one or more stored or derived attributes, in order: the planner uses it for
/// equality, ranges, `IN`, prefix matches and sorted results.
public struct FetchIndex: Sendable {
    public var properties: [String]
    public init(_ properties: String...) { self.properties = properties }
}

/// One declaration inside an `Entity { … }` block.
public struct EntityMember: Sendable {
    enum Kind: Sendable {
        case attribute(Attribute), relationship(Relationship), derived(Derived), unique(Unique), index(FetchIndex)
    }
    let kind: Kind
}

/// Collects an entity's declarations.
@resultBuilder
public enum EntityBuilder {
    public static func buildExpression(_ a: Attribute) -> [EntityMember] { [EntityMember(kind: .attribute(a))] }
    public static func buildExpression(_ r: Relationship) -> [EntityMember] { [EntityMember(kind: .relationship(r))] }
    public static func buildExpression(_ d: Derived) -> [EntityMember] { [EntityMember(kind: .derived(d))] }
    public static func buildExpression(_ u: Unique) -> [EntityMember] { [EntityMember(kind: .unique(u))] }
    public static func buildExpression(_ i: FetchIndex) -> [EntityMember] { [EntityMember(kind: .index(i))] }
    public static func buildBlock(_ parts: [EntityMember]...) -> [EntityMember] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [EntityMember]?) -> [EntityMember] { part ?? [] }
    public static func buildEither(first: [EntityMember]) -> [EntityMember] { first }
    public static func buildEither(second: [EntityMember]) -> [EntityMember] { second }
    public static func buildArray(_ parts: [[EntityMember]]) -> [EntityMember] { parts.flatMap { $0 } }
}

/// An entity: a kind of object, with its attributes, relationships, derived attributes,
/// constraints and indexes.
public struct Entity: Sendable {
    public var name: String
    public var renamingIdentifier: String?
    var members: [EntityMember]

    public init(_ name: String, renamedFrom: String? = nil, @EntityBuilder _ members: () -> [EntityMember]) {
        self.name = name
        self.renamingIdentifier = renamedFrom
        self.members = members()
    }
}

/// Collects a model's entities.
@resultBuilder
public enum ModelBuilder {
    public static func buildExpression(_ e: Entity) -> [Entity] { [e] }
    public static func buildBlock(_ parts: [Entity]...) -> [Entity] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [Entity]?) -> [Entity] { part ?? [] }
    public static func buildEither(first: [Entity]) -> [Entity] { first }
    public static func buildEither(second: [Entity]) -> [Entity] { second }
    public static func buildArray(_ parts: [[Entity]]) -> [Entity] { parts.flatMap { $0 } }
}
