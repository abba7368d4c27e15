import Foundation

/// Texts for errors about values; they name the kind of value, never the value itself
/// (``StrataError`` descriptions hold no user data).
enum ValueDescription {
    static func kind(_ value: StoredValue) -> String {
        switch value {
        case .null: return "nil"
        case .bool: return "a bool"
        case .int: return "an integer"
        case .double(let double): return double.isNaN ? "NaN" : (double.isInfinite ? "an infinite double" : "a double")
        case .decimal(let decimal): return decimal.isNaN ? "a NaN decimal" : "a decimal"
        case .string: return "a string"
        case .date(let date):
            return date.timeIntervalSinceReferenceDate.isFinite ? "a date" : "a date at infinity or NaN"
        case .uuid: return "a UUID"
        case .binary: return "binary data"
        }
    }

    /// Why `value` cannot be stored in an attribute of `type`.
    static func whyNot(_ value: StoredValue, _ type: AttributeType) -> String {
        switch (value, type) {
        case (.int, _) where type.isInteger,
             (.double, _) where type.isInteger || type == .decimal,
             (.decimal, _) where type.isInteger || type == .double,
             (.int, .double):
            return "\(kind(value)) that \(type.rawValue) cannot hold exactly (out of range, fractional or too precise)"
        default:
            return "\(kind(value)) is not a \(type.rawValue)"
        }
    }
}
