/// A relationship of an entity, resolved against the model.
public struct ResolvedRelationship: Sendable {
    /// The relationship's name, unique among its entity's properties.
    public let name: String
    /// The target entity's name.
    public let target: String
    /// The name of the inverse relationship on the target entity.
    public let inverse: String
    /// Whether the relationship reaches many objects (`false`: at most one).
    public let isToMany: Bool
    /// What deleting an object of this entity does to the objects the relationship reaches.
    public let deleteRule: DeleteRule
    /// Whether a to-one relationship may be empty at commit; always `true` for a to-many one.
    public let isOptional: Bool
    /// Both sides to-many: stored in a join tree.
    public let isManyToMany: Bool
    /// The target entity's index.
    let targetIndex: Int
    /// To-one: this row's field holding the target key. Nil for to-many.
    let field: Int?
    /// To-many with a to-one inverse: the target's field holding the key of this row.
    let inverseField: Int?
    /// The relationship's name in the previous model version.
    let renamedFrom: String?
}
