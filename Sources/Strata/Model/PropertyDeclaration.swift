import StrataRecords

/// What one property wrapper declares, as captured while a class's schema is built.
enum PropertyDeclaration {
    case attribute(AttributeDeclaration)
    case relationship(RelationshipDeclaration)
    case derived(DerivedDeclaration)
}

struct AttributeDeclaration {
    var bridge: ValueBridge
    var type: AttributeType
    var isOptional: Bool
    var options: AttributeOptions
    var defaultValue: StoredValue?
    var validation: [ValidationRule]
    var renamedFrom: String?
    /// Modelled, never stored (``Transient``).
    var isTransient = false
    /// A ``CodableAttribute``'s default (nil boxed for an optional one): what it reads as when
    /// its stored JSON does not decode.
    var codableDefault: Any?
}

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

struct DerivedDeclaration {
    var bridge: ValueBridge
    var type: AttributeType
    var isOptional: Bool
    var expression: String
    var options: AttributeOptions
    var renamedFrom: String?
}
