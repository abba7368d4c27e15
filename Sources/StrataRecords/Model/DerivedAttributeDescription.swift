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
    public init(_ name: String, _ type: AttributeType, _ expression: String, optional: Bool = false,
                renamedFrom: String? = nil) {
        self.name = name
        self.type = type
        self.expression = expression
        self.isOptional = optional
        self.renamingIdentifier = renamedFrom
    }
}
