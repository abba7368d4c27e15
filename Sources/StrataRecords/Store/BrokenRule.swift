/// The row a commit's checks refused, and what it broke: set on the transaction when its
/// commit throws a uniqueness, validation or `deny` error, so a caller applying rows it did not
/// write (a replicator's pull) can leave that row out and try again, where the error itself
/// names only the entity.
package struct BrokenRule: Sendable, Equatable {
    /// What a row broke.
    package enum Rule: Sendable, Equatable {
        /// A required value, an integer range or a validation rule.
        case validation
        /// The uniqueness constraint at this index of the entity's constraints: ``BrokenRule/holder``
        /// holds the same values.
        case unique(Int)
        /// A `deny` delete rule: the row was deleted while ``BrokenRule/holder`` still reaches it.
        case deny
    }

    /// The row refused (for `deny`, the row deleted).
    package let row: ObjectID
    /// The rule.
    package let rule: Rule
    /// The other row involved: the one already holding the unique values, or one a `deny`
    /// relationship still reaches.
    package let holder: ObjectID?
}
