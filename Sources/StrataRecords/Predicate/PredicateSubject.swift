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
