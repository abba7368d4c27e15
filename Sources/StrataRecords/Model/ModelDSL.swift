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
public struct AttributeDescription: Sendable {
    /// The attribute's name: letters, digits and `_`, not starting with `_` or a digit.
    public var name: String
    /// The type of the attribute's values.
    public var type: AttributeType
    /// Whether the value may be `null`; a required attribute left `null` fails the commit with
    /// `StrataError.validation`.
    public var isOptional: Bool
    /// The value a new object starts with; `nil` means it starts `null`.
    public var defaultValue: StoredValue?
    /// Whether the attribute is only modelled: never stored, and not usable in a fetch.
    public var isTransient: Bool
    /// Rules every non-`null` value must satisfy at commit (`StrataError.validation`).
    public var validation: [ValidationRule]
    /// The attribute's name in the previous model version, for a lightweight migration.
    public var renamingIdentifier: String?
    /// The default was given as an ``ObjectID``, which is no attribute value (the model refuses it).
    var defaultIsObjectID = false

    /// An attribute named `name` of `type`. `defaultValue` must convert to `type` exactly, as
    /// inserted values must (checked when the model is built: `StrataError.invalidModel`);
    /// `renamedFrom` is its name in the previous model version.
    public init(_ name: String, _ type: AttributeType, optional: Bool = false, default defaultValue: ValueConvertible? = nil,
                transient: Bool = false, validation: [ValidationRule] = [], renamedFrom: String? = nil) {
        self.name = name
        self.type = type
        self.isOptional = optional
        self.defaultValue = defaultValue?.strataValue
        self.defaultIsObjectID = defaultValue is ObjectID
        self.isTransient = transient
        self.validation = validation
        self.renamingIdentifier = renamedFrom
    }
}

/// A relationship: to-one (stored in the row), to-many (answered by an index on the inverse
/// to-one), or many-to-many (both sides to-many: a join tree). Every relationship names its
/// inverse; the record layer keeps both sides consistent.
public struct RelationshipDescription: Sendable {
    /// The relationship's name.
    public var name: String
    /// The name of the entity the relationship reaches.
    public var target: String
    /// Whether the relationship reaches many objects (`false`: at most one).
    public var isToMany: Bool
    /// The name of the inverse relationship on the target entity.
    public var inverse: String
    /// What deleting an object does to the objects this relationship reaches.
    public var deleteRule: DeleteRule
    /// Whether a to-one relationship may be empty at commit; always `true` for a to-many one.
    public var isOptional: Bool
    /// The relationship's name in the previous model version, for a lightweight migration.
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

/// An attribute the store computes from `expression` when a transaction settles (before a
/// read through it, and at commit); callers cannot set it.
///
/// Expressions: `list.name` (copy through to-one hops), `lowercase:(name)`,
/// `uppercase:(name)`, `canonical:(name)`, `items.@count`, `items.amount.@sum` (also `@avg`,
/// `@min`, `@max`), `now()`, and arithmetic `+ - * /` over numbers of the row and its to-one
/// targets (`price * quantity`).
///
/// `now()` is the time the write transaction began (one value for all its rows); it moves when
/// the row is inserted or a caller changes one of its stored attributes or to-one relationships
/// to a different value, never for changes of derived values or of to-many relationships.
/// Sums and averages follow one arithmetic (docs/decisions.md): exact for integers and
/// decimals, rounded once; a result the attribute cannot hold fails with
/// `StrataError.validation` naming entity and attribute.
public struct DerivedAttributeDescription: Sendable {
    /// The derived attribute's name.
    public var name: String
    /// The type of the computed value; it must fit the expression (checked when the model is built).
    public var type: AttributeType
    /// The expression the value is computed from, in one of the forms listed above.
    public var expression: String
    /// Whether the computed value may be `null`; required when the expression can yield nothing (an
    /// optional to-one on its path, an empty `@avg`, a division by zero).
    public var isOptional: Bool
    /// The derived attribute's name in the previous model version, for a lightweight migration.
    public var renamingIdentifier: String?

    /// A derived attribute named `name` of `type`, computed from `expression`; `renamedFrom` is its
    /// name in the previous model version.
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
    /// The names of the constrained properties: no two objects may have equal values for all of them
    /// (checked at commit, `StrataError.conflict`).
    public var properties: [String]
    /// A uniqueness constraint over `properties`.
    public init(_ properties: String...) { self.properties = properties }
    /// The same, from an array (for models built by code).
    public init(_ properties: [String]) { self.properties = properties }
}

/// An index over one or more stored or derived attributes, in order: the planner uses it for
/// equality, ranges, `IN`, prefix matches and sorted results.
public struct FetchIndex: Sendable {
    /// The names of the indexed properties, in key order.
    public var properties: [String]
    /// An index over `properties`, in key order.
    public init(_ properties: String...) { self.properties = properties }
    /// The same, from an array (for models built by code).
    public init(_ properties: [String]) { self.properties = properties }
}

/// One declaration inside an `Entity { … }` block.
public struct EntityMember: Sendable {
    enum Kind: Sendable {
        case attribute(AttributeDescription), relationship(RelationshipDescription), derived(DerivedAttributeDescription), unique(Unique), index(FetchIndex)
    }
    let kind: Kind
    init(kind: Kind) { self.kind = kind }
    /// An attribute declaration, for models built by code rather than in an `Entity { … }` block.
    public init(_ attribute: AttributeDescription) { kind = .attribute(attribute) }
    /// A relationship declaration.
    public init(_ relationship: RelationshipDescription) { kind = .relationship(relationship) }
    /// A derived attribute declaration.
    public init(_ derived: DerivedAttributeDescription) { kind = .derived(derived) }
    /// A uniqueness constraint.
    public init(_ unique: Unique) { kind = .unique(unique) }
    /// A fetch index.
    public init(_ index: FetchIndex) { kind = .index(index) }
}

/// Collects an entity's declarations.
@resultBuilder
public enum EntityBuilder {
    /// Adds an attribute to the entity.
    public static func buildExpression(_ a: AttributeDescription) -> [EntityMember] { [EntityMember(kind: .attribute(a))] }
    /// Adds a relationship to the entity.
    public static func buildExpression(_ r: RelationshipDescription) -> [EntityMember] { [EntityMember(kind: .relationship(r))] }
    /// Adds a derived attribute to the entity.
    public static func buildExpression(_ d: DerivedAttributeDescription) -> [EntityMember] { [EntityMember(kind: .derived(d))] }
    /// Adds a uniqueness constraint to the entity.
    public static func buildExpression(_ u: Unique) -> [EntityMember] { [EntityMember(kind: .unique(u))] }
    /// Adds an index to the entity.
    public static func buildExpression(_ i: FetchIndex) -> [EntityMember] { [EntityMember(kind: .index(i))] }
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

/// An entity: a kind of object, with its attributes, relationships, derived attributes,
/// constraints and indexes.
public struct Entity: Sendable {
    /// The entity's name, unique in the model.
    public var name: String
    /// The entity's name in the previous model version, for a lightweight migration.
    public var renamingIdentifier: String?
    var members: [EntityMember]

    /// An entity named `name` with the attributes, relationships, derived attributes, constraints and
    /// indexes declared in `members`; `renamedFrom` is its name in the previous model version.
    public init(_ name: String, renamedFrom: String? = nil, @EntityBuilder _ members: () -> [EntityMember]) {
        self.name = name
        self.renamingIdentifier = renamedFrom
        self.members = members()
    }

    /// An entity with the declarations in `members`, for models built by code.
    public init(_ name: String, renamedFrom: String? = nil, members: [EntityMember]) {
        self.name = name
        self.renamingIdentifier = renamedFrom
        self.members = members
    }
}

/// Collects a model's entities.
@resultBuilder
public enum ModelBuilder {
    /// Adds an entity to the model.
    public static func buildExpression(_ e: Entity) -> [Entity] { [e] }
    /// The entities of a block, in order.
    public static func buildBlock(_ parts: [Entity]...) -> [Entity] { parts.flatMap { $0 } }
    /// The entities of an `if` without `else`: none when the condition is false.
    public static func buildOptional(_ part: [Entity]?) -> [Entity] { part ?? [] }
    /// The entities of the first branch of an `if`/`else` or `switch`, when it is taken.
    public static func buildEither(first: [Entity]) -> [Entity] { first }
    /// The entities of the second branch of an `if`/`else` or `switch`, when it is taken.
    public static func buildEither(second: [Entity]) -> [Entity] { second }
    /// The entities of a `for` loop, every iteration's in order.
    public static func buildArray(_ parts: [[Entity]]) -> [Entity] { parts.flatMap { $0 } }
}
