/// One object a predicate is evaluated against; the record layer implements it over a row.
protocol PredicateSubject {
    /// The value at `keyPath`: `.one` through attributes and to-one relationships (nil
    /// when a to-one on the way is nil), `.many` when the path crosses a to-many
    /// relationship (a to-many relationship itself yields its objects' primary keys as `.int`).
    ///
    /// The empty key path (`SELF` in a format string) is the object itself, as the
    /// implementation chooses to represent it (its primary key, typically).
    func values(at keyPath: [String]) throws -> KeyPathValues
}

/// What a key path yields for one object: one value, or a collection through a to-many
/// relationship (which a comparison without a quantifier tests with ANY, as Core Data does).
enum KeyPathValues: Hashable, Sendable {
    /// The value through attributes and to-one relationships (`.null` when absent).
    case one(StoredValue)
    /// The values through a to-many relationship, one per object reached (none for none).
    case many([StoredValue])
}
