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

extension FetchExpression {
    /// The attributes a word comparison's left side names: one key path of one component, or
    /// a list of them; nil for anything else.
    var wordProperties: [String]? {
        switch self {
        case .keyPath(let path) where path.count == 1:
            return path
        case .list(let items):
            var names: [String] = []
            for item in items {
                guard case .keyPath(let path) = item, path.count == 1 else { return nil }
                names.append(path[0])
            }
            return names
        default:
            return nil
        }
    }
}
