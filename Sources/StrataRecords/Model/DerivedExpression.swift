/// A derived attribute's expression, parsed (``Derived/expression``).
indirect enum DerivedExpression: Hashable, Sendable {
    /// Attribute `path.last` of the object reached through the to-one hops `path.dropLast()`.
    case path([String])
    case lowercase(DerivedExpression)
    case uppercase(DerivedExpression)
    case canonical(DerivedExpression)
    /// `relationship.@count`, `relationship.attribute.@sum|@avg|@min|@max` over a to-many.
    case aggregate(AggregateFunction, relationship: String, attribute: String?)
    case now
    case literal(StoredValue)
    case arithmetic(ArithmeticOperator, DerivedExpression, DerivedExpression)
    case negate(DerivedExpression)

    enum ArithmeticOperator: Character, Hashable, Sendable {
        case add = "+", subtract = "-", multiply = "*", divide = "/"
    }

    /// Every `.path` inside (the key paths the expression reads).
    var paths: [[String]] {
        switch self {
        case .path(let p): return [p]
        case .lowercase(let e), .uppercase(let e), .canonical(let e), .negate(let e): return e.paths
        case .arithmetic(_, let a, let b): return a.paths + b.paths
        case .aggregate, .now, .literal: return []
        }
    }
}
