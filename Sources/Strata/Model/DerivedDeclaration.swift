import StrataRecords

struct DerivedDeclaration {
    var bridge: ValueBridge
    var type: AttributeType
    var isOptional: Bool
    var expression: String
    var options: AttributeOptions
    var renamedFrom: String?
}
