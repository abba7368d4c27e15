/// A relationship: to-one (stored in the row), to-many (answered by an index on the inverse
/// to-one), or many-to-many (both sides to-many: a join tree). Every relationship names its
/// inverse; the record layer keeps both sides consistent.
public struct RelationshipDescription: Sendable {
    /// The relationship's name.
    public var name: String
    /// The name of the entity the relationship reaches.
    public var target: String
    /// Whether the relationship reaches many objects (`false`: at most one).
    public var isToMany: Bool
    /// The name of the inverse relationship on the target entity.
    public var inverse: String
    /// What deleting an object does to the objects this relationship reaches.
    public var deleteRule: DeleteRule
    /// Whether a to-one relationship may be empty at commit; always `true` for a to-many one.
    public var isOptional: Bool
    /// The relationship's name in the previous model version, for a lightweight migration.
    public var renamingIdentifier: String?

    /// A to-one relationship to `target`.
    public init(_ name: String, toOne target: String, inverse: String, deleteRule: DeleteRule = .nullify,
                optional: Bool = true, renamedFrom: String? = nil) {
        self.name = name
        self.target = target
        self.isToMany = false
        self.inverse = inverse
        self.deleteRule = deleteRule
        self.isOptional = optional
        self.renamingIdentifier = renamedFrom
    }

    /// A to-many relationship to `target`.
    public init(_ name: String, toMany target: String, inverse: String, deleteRule: DeleteRule = .nullify,
                renamedFrom: String? = nil) {
        self.name = name
        self.target = target
        self.isToMany = true
        self.inverse = inverse
        self.deleteRule = deleteRule
        self.isOptional = true
        self.renamingIdentifier = renamedFrom
    }
}
