import StrataRecords

struct RelationshipDeclaration {
    var target: ManagedObject.Type
    var isToMany: Bool
    var isOptional: Bool
    var deleteRule: DeleteRule
    /// Resolves the declared inverse key path to a property name (by reading it on a probe
    /// prototype of the target); `nil` when no inverse was declared on this side.
    var inverse: (() -> String?)?
    var renamedFrom: String?
    var bridge: RelationshipBridge
}
