/// A property another one depends on, seen from the property that changes: the owner's
/// property `key` depends on it through `hops` (the relationships from the owner to here, in
/// order).
struct Dependent: @unchecked Sendable {
    let owner: EntitySchema
    let key: String
    let hops: [Hop]

    struct Hop {
        /// The schema the relationship belongs to, and its name.
        let schema: EntitySchema
        let relationship: String
    }
}
