import StrataRecords

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
