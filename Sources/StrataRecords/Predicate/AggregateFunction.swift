/// A function over the values a to-many key path reaches (`@count`, `@sum`, …).
public enum AggregateFunction: String, Hashable, Sendable {
    /// Number of objects, sum, average, minimum, maximum.
    case count, sum, avg, min, max
}
