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
