/// A condition on the objects of one entity, as a tree: what a format string such as
/// `"itemCount > %@ AND searchName BEGINSWITH[cd] %@"` parses into, or what the typed
/// builder makes. Evaluated against rows (`PredicateEvaluator`) and planned onto indexes.
public indirect enum FetchPredicate: Hashable, Sendable {
    /// Always true or always false (`TRUEPREDICATE`, `FALSEPREDICATE`).
    case constant(Bool)
    /// `lhs op rhs`, with a quantifier when `lhs` runs through a to-many relationship.
    case comparison(Comparison)
    /// True when every subpredicate is (an empty list is true).
    case and([FetchPredicate])
    /// True when any subpredicate is (an empty list is false).
    case or([FetchPredicate])
    /// True when the subpredicate is false.
    case not(FetchPredicate)
}

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

/// What a comparison compares.
public indirect enum FetchExpression: Hashable, Sendable {
    /// A constant (after `%@` substitution).
    case constant(StoredValue)
    /// A key path from the evaluated object: `name`, `list.name` (through to-one), or
    /// `items.amount` (through to-many: many values, used with a quantifier).
    case keyPath([String])
    /// `items.@count`, `items.amount.@sum`, `@avg`, `@min`, `@max` over a to-many key path.
    case aggregate(AggregateFunction, [String])
    /// A list of expressions: the right side of `IN` and of `BETWEEN` (two elements).
    case list([FetchExpression])
    /// `$name`: a value given when a prepared fetch runs (``PreparedFetch``), one value (a
    /// list is written as a list of variables). A request holding one cannot run unprepared.
    case variable(String)
}

/// A function over the values a to-many key path reaches (`@count`, `@sum`, …).
public enum AggregateFunction: String, Hashable, Sendable {
    /// Number of objects, sum, average, minimum, maximum.
    case count, sum, avg, min, max
}

/// A comparison operator; the raw value is its format-string spelling.
public enum ComparisonOperator: String, Hashable, Sendable {
    /// `==`: equal values (numbers compare by value across int, double and decimal; strings
    /// are equal when canonically equivalent, as Swift's `==` says).
    case equal = "=="
    /// `!=`: unequal values.
    case notEqual = "!="
    /// `<`: less than; strings order by the Unicode scalars of their NFC forms. Values of
    /// different kinds (other than numbers), `nil` and NaN never order (a fetch rejects a
    /// comparison of kinds that cannot compare before it runs).
    case less = "<"
    /// `<=`: less than or equal.
    case lessOrEqual = "<="
    /// `>`: greater than.
    case greater = ">"
    /// `>=`: greater than or equal.
    case greaterOrEqual = ">="
    /// `IN`: equal to an element of the right side (a list, or a to-many key path).
    case `in` = "IN"
    /// `BETWEEN`: within the right side's two bounds, both included.
    case between = "BETWEEN"
    /// `BEGINSWITH`: a string that starts with the right side (whole characters, without options).
    case beginsWith = "BEGINSWITH"
    /// `ENDSWITH`: a string that ends with the right side (whole characters, without options).
    case endsWith = "ENDSWITH"
    /// `CONTAINS`: a string that contains the right side (whole characters, without options).
    case contains = "CONTAINS"
    /// `LIKE`: a string that matches a wildcard pattern (`*` any run, `?` one character, `\` escapes).
    case like = "LIKE"
    /// `MATCHES`: a string that an ICU regular expression matches whole.
    case matches = "MATCHES"
}

/// `ANY`/`SOME`, `ALL`, `NONE` before a key path through a to-many relationship.
public enum Quantifier: String, Hashable, Sendable {
    /// `direct`: no quantifier; `any`: some value passes; `all`: every value passes; `none`: no value
    /// passes.
    case direct, any, all, none
}

/// String comparison options: `[c]` case-insensitive, `[d]` diacritic-insensitive,
/// `[n]` normalized (compare the NFC forms' bytes, the fast path).
///
/// `[c]` and `[d]` fold both sides as ``TextFolding/fold(_:caseInsensitive:diacriticInsensitive:)``
/// does, locale-independently (`canonical:` is the `[cd]` folding). `[n]` supersedes both, as in
/// Core Data.
public struct StringOptions: OptionSet, Hashable, Sendable {
    /// The option bits.
    public let rawValue: UInt8
    /// Options from their bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// `[c]`: ignore case (full case folding).
    public static let caseInsensitive = StringOptions(rawValue: 1)
    /// `[d]`: ignore diacritics.
    public static let diacriticInsensitive = StringOptions(rawValue: 2)
    /// `[n]`: compare the bytes of both sides' NFC forms, without folding and without
    /// grapheme awareness: for text already in NFC that is its bytes as given (Core Data's
    /// meaning, for text it calls normalized), and for other text still what an index gives.
    public static let normalized = StringOptions(rawValue: 4)
}
