/// What a key path yields for one object: one value, or a collection through a to-many
/// relationship (which a comparison without a quantifier tests with ANY, as Core Data does).
enum KeyPathValues: Hashable, Sendable {
    /// The value through attributes and to-one relationships (`.null` when absent).
    case one(StoredValue)
    /// The values through a to-many relationship, one per object reached (none for none).
    case many([StoredValue])
}
