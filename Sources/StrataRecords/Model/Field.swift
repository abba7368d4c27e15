/// One stored slot of a row, in row order.
struct Field: Sendable {
    enum Kind: Sendable, Equatable {
        /// A stored attribute.
        case attribute
        /// A derived attribute (computed at commit; callers cannot set it).
        case derived
        /// A to-one relationship: the target's primary key; `target` is its entity's index.
        case toOne(target: Int)
        /// Bookkeeping a derived attribute needs (an `@avg`'s sum and count, a double sum's
        /// compensation); never visible to callers.
        case auxiliary
    }
    var name: String
    var kind: Kind
    /// The value type (`int64` for to-one keys).
    var type: AttributeType
    var isOptional: Bool
    var defaultValue: StoredValue?
    var validation: [ValidationRule]
    /// The field's name in the previous model version (lightweight migration).
    var renamedFrom: String? = nil
    /// Whether a delete's history lists the value (``AttributeDescription/isPreservedAfterDeletion``).
    var isPreservedAfterDeletion = false
}
