/// A key path in the typed predicate builder: the left side of a comparison written in Swift.
///
///     PropertyPath("itemCount") > 5
///         && PropertyPath("searchName").beginsWith("ab", options: [.caseInsensitive, .diacriticInsensitive])
///     PropertyPath("list.name") == "Home"
///     PropertyPath("items").count > 3
///     PropertyPath.any("items.amount") > 5
///
/// String comparisons without options compare the argument as given. A `canonical:` derived
/// attribute holds folded text, so compare it with `options: [.caseInsensitive,
/// .diacriticInsensitive]` (`[cd]` in a format string): the argument is folded the same way and
/// the attribute's index still answers.
///
/// A property path is also a ``PredicateArgument``, so it can be the right side
/// (`PropertyPath("a") == PropertyPath("b")`) or a `%@`/`%K` argument. `PropertyPath` is
/// deliberately not `Equatable`: `==` between property paths builds a predicate, and a
/// `Bool`-returning `==` beside it would make every such comparison ambiguous.
public struct PropertyPath: Sendable {
    /// The key path's components; empty for the object itself (`SELF`).
    public let path: [String]
    /// The aggregate taken over the path (`items.@count`), if any.
    public let aggregate: AggregateFunction?
    /// How comparisons treat the many values of a path through a to-many relationship.
    public let quantifier: Quantifier

    /// A key path written with dots, as in a format string: `"list.name"`,
    /// `"items.amount.@sum"`. The empty string is the object itself.
    public init(_ keyPath: String) {
        // A plain attribute name (the usual key) needs no splitting.
        if !keyPath.isEmpty, !keyPath.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "@") }) {
            self.init(path: [keyPath], aggregate: nil, quantifier: .direct)
            return
        }
        let (components, name) = KeyPathText.parse(keyPath)
        // An unknown `@name` stays a key (the fetch then reports it as no such property).
        guard let name else { self.init(path: components, aggregate: nil, quantifier: .direct); return }
        guard let function = AggregateFunction(rawValue: name.lowercased()) else {
            self.init(path: components + ["@" + name], aggregate: nil, quantifier: .direct)
            return
        }
        self.init(path: components, aggregate: function, quantifier: .direct)
    }

    /// A key path from its components, for names that contain dots.
    public init(path: [String]) {
        self.init(path: path, aggregate: nil, quantifier: .direct)
    }

    private init(path: [String], aggregate: AggregateFunction?, quantifier: Quantifier) {
        self.path = path
        self.aggregate = aggregate
        self.quantifier = quantifier
    }

    /// The path as a predicate expression (its quantifier belongs to the comparison instead).
    public var expression: FetchExpression {
        if let aggregate { return .aggregate(aggregate, path) }
        return .keyPath(path)
    }

    private func aggregated(_ function: AggregateFunction) -> PropertyPath {
        PropertyPath(path: path, aggregate: function, quantifier: .direct)
    }

    /// The number of objects (or values) at this to-many key path: `items.@count`.
    public var count: PropertyPath { aggregated(.count) }
    /// The sum of the numbers at this to-many key path: `items.amount.@sum`.
    public var sum: PropertyPath { aggregated(.sum) }
    /// The mean of the numbers at this to-many key path (nil when there are none): `@avg`.
    public var average: PropertyPath { aggregated(.avg) }
    /// The least value at this to-many key path (nil when there are none): `@min`.
    public var minimum: PropertyPath { aggregated(.min) }
    /// The greatest value at this to-many key path (nil when there are none): `@max`.
    public var maximum: PropertyPath { aggregated(.max) }

    private func quantified(_ quantifier: Quantifier) -> PropertyPath {
        PropertyPath(path: path, aggregate: aggregate, quantifier: quantifier)
    }

    /// True when some value at the to-many key path satisfies the comparison: `ANY`.
    public static func any(_ key: PropertyPath) -> PropertyPath { key.quantified(.any) }
    /// True when every value at the to-many key path satisfies it (also when there are none): `ALL`.
    public static func all(_ key: PropertyPath) -> PropertyPath { key.quantified(.all) }
    /// True when no value at the to-many key path satisfies it: `NONE`.
    public static func none(_ key: PropertyPath) -> PropertyPath { key.quantified(.none) }

    /// `ANY keyPath`, with the key path written with dots.
    public static func any(_ keyPath: String) -> PropertyPath { any(PropertyPath(keyPath)) }
    /// `ALL keyPath`, with the key path written with dots.
    public static func all(_ keyPath: String) -> PropertyPath { all(PropertyPath(keyPath)) }
    /// `NONE keyPath`, with the key path written with dots.
    public static func none(_ keyPath: String) -> PropertyPath { none(PropertyPath(keyPath)) }
}

extension PropertyPath: PredicateArgument {
    /// The key path (or aggregate) as the other side of a comparison.
    public var predicateExpression: FetchExpression { expression }
}

extension PropertyPath: CustomStringConvertible {
    /// The path as a format string writes it, quantifier included: `ANY items.amount`.
    public var description: String {
        let text = expression.description
        switch quantifier {
        case .direct: return text
        case .any: return "ANY " + text
        case .all: return "ALL " + text
        case .none: return "NONE " + text
        }
    }
}
