/// A condition on the objects of one entity, as a tree: what a format string such as
/// `"itemCount > %@ AND searchName BEGINSWITH[cd] %@"` parses into, or what the typed
/// builder makes. Evaluated against rows (``PredicateEvaluator``) and planned onto indexes.
public indirect enum Predicate: Hashable, Sendable {
    case constant(Bool)
    /// `lhs op rhs`, with a quantifier when `lhs` runs through a to-many relationship.
    case comparison(Comparison)
    case and([Predicate])
    case or([Predicate])
    case not(Predicate)
}

/// One comparison, like `NSComparisonPredicate`.
public struct Comparison: Hashable, Sendable {
    public var lhs: Expression
    public var op: ComparisonOperator
    public var rhs: Expression
    public var quantifier: Quantifier
    public var options: StringOptions

    public init(_ lhs: Expression, _ op: ComparisonOperator, _ rhs: Expression,
                quantifier: Quantifier = .direct, options: StringOptions = []) {
        self.lhs = lhs
        self.op = op
        self.rhs = rhs
        self.quantifier = quantifier
        self.options = options
    }
}

/// What a comparison compares.
public indirect enum Expression: Hashable, Sendable {
    /// A constant (after `%@` substitution).
    case constant(Value)
    /// A key path from the evaluated object: `name`, `list.name` (through to-one), or
    /// `items.amount` (through to-many: many values, used with a quantifier).
    case keyPath([String])
    /// `items.@count`, `items.amount.@sum`, `@avg`, `@min`, `@max` over a to-many key path.
    case aggregate(AggregateFunction, [String])
    /// A list of expressions: the right side of `IN` and of `BETWEEN` (two elements).
    case list([Expression])
}

public enum AggregateFunction: String, Hashable, Sendable {
    case count, sum, avg, min, max
}

public enum ComparisonOperator: String, Hashable, Sendable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case `in` = "IN"
    case between = "BETWEEN"
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    case like = "LIKE"
    case matches = "MATCHES"
}

/// `ANY`/`SOME`, `ALL`, `NONE` before a key path through a to-many relationship.
public enum Quantifier: String, Hashable, Sendable {
    case direct, any, all, none
}

/// String comparison options: `[c]` case-insensitive, `[d]` diacritic-insensitive,
/// `[n]` normalized (the values are already canonical: compare bytes, the fast path).
public struct StringOptions: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let caseInsensitive = StringOptions(rawValue: 1)
    public static let diacriticInsensitive = StringOptions(rawValue: 2)
    public static let normalized = StringOptions(rawValue: 4)
}
