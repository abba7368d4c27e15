/// A derived attribute, resolved.
public struct ResolvedDerivedAttribute: Sendable {
    /// The derived attribute's name.
    public let name: String
    /// The type of the computed value.
    public let type: AttributeType
    /// The expression the value is computed from, as declared (see ``DerivedAttributeDescription``).
    public let expression: String
    /// Whether the computed value may be `null` (an optional to-one on its path, an empty `@avg`,
    /// a division by zero).
    public let isOptional: Bool
    let parsed: DerivedExpression
    let field: Int
    /// Auxiliary fields (FORMAT.md §12, "Row layout"): `@avg` keeps [sum, count] and, over
    /// doubles, [sum, count, compensation]; a `@sum` over doubles keeps [sum, compensation];
    /// a `@sum` declared in another kind than its values keeps [sum].
    let auxiliaryFields: [Int]
    /// For an aggregate over an attribute: that attribute's type.
    let aggregateSourceType: AttributeType?
}
