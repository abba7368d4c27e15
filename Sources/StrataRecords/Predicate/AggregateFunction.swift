import StrataStorage
/// A function over the values a to-many key path reaches (`@count`, `@sum`, …).
public enum AggregateFunction: String, Hashable, Sendable {
    /// Number of objects, sum, average, minimum, maximum.
    case count, sum, avg, min, max
}

/// `@count`, `@sum`, `@avg`, `@min` and `@max` over the values of a key path in a predicate,
/// by ``AggregateArithmetic`` (the arithmetic derived attributes and `checkRecords` use):
/// integer sums exact in 64 bits, decimal sums exact, double sums compensated; integers
/// average to the nearest double, decimals to a decimal. `nil`s and non-numbers are skipped
/// by the arithmetic aggregates. `@avg`, `@min` and `@max` of nothing are `nil`; `@sum` of
/// nothing is 0. A sum its type cannot hold throws `StrataError.invalidFetch`.
enum Aggregation {
    static func apply(_ function: AggregateFunction, to values: KeyPathValues) throws -> StoredValue {
        let elements: [StoredValue]
        switch values {
        case .one(.null): elements = []  // a nil to-one on the way: no objects
        case .one(let value): elements = [value]
        case .many(let list): elements = list
        }
        do {
            return try AggregateArithmetic.aggregate(function, of: elements)
        } catch {
            throw StrataError.invalidFetch("@\(function.rawValue): \(error.reason)")
        }
    }
}
