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
        case .path(let path): return [path]
        case .lowercase(let operand), .uppercase(let operand), .canonical(let operand), .negate(let operand):
            return operand.paths
        case .arithmetic(_, let lhs, let rhs): return lhs.paths + rhs.paths
        case .aggregate, .now, .literal: return []
        }
    }
}
