/// `$name` in a typed-builder comparison, given a value when the prepared fetch runs:
/// `PropertyPath("sku") == .variable("sku")` (see ``PreparedFetch``).
public struct FetchVariable: PredicateArgument, Sendable {
    /// The variable's name, without `$`.
    public let name: String

    /// The variable `$name`.
    public init(_ name: String) { self.name = name }

    /// The variable.
    public var predicateExpression: FetchExpression { .variable(name) }
}

extension PredicateArgument where Self == FetchVariable {
    /// The variable `$name`.
    public static func variable(_ name: String) -> FetchVariable { FetchVariable(name) }
}
