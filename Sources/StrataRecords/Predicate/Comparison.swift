/// One comparison, like `NSComparisonPredicate`.
public struct Comparison: Hashable, Sendable {
    /// The left side: usually a key path or an aggregate.
    public var lhs: FetchExpression
    /// How the two sides are compared.
    public var op: ComparisonOperator
    /// The right side: usually a constant, or a list for `IN` and `BETWEEN`.
    public var rhs: FetchExpression
    /// How the many values of a `lhs` through a to-many relationship combine (`.direct` acts as `.any`).
    public var quantifier: Quantifier
    /// How strings are compared: `[c]`, `[d]`, `[n]`.
    public var options: StringOptions

    /// Compares `lhs` with `rhs` by `op`; `quantifier` and `options` default to none.
    public init(_ lhs: FetchExpression, _ op: ComparisonOperator, _ rhs: FetchExpression,
                quantifier: Quantifier = .direct, options: StringOptions = []) {
        self.lhs = lhs
        self.op = op
        self.rhs = rhs
        self.quantifier = quantifier
        self.options = options
    }
}
