import Foundation

/// Swift values that convert to a ``StoredValue``: literals in models, arguments in inserts.
public protocol ValueConvertible: Sendable {
    /// The value as the record layer stores and compares it.
    var strataValue: StoredValue { get }
}

extension StoredValue: ValueConvertible { public var strataValue: StoredValue { self } }
extension Bool: ValueConvertible { public var strataValue: StoredValue { .bool(self) } }
extension Int: ValueConvertible { public var strataValue: StoredValue { .int(Int64(self)) } }
extension Int64: ValueConvertible { public var strataValue: StoredValue { .int(self) } }
extension Int32: ValueConvertible { public var strataValue: StoredValue { .int(Int64(self)) } }
extension Int16: ValueConvertible { public var strataValue: StoredValue { .int(Int64(self)) } }
extension Double: ValueConvertible { public var strataValue: StoredValue { .double(self) } }
extension Decimal: ValueConvertible { public var strataValue: StoredValue { .decimal(self) } }
extension String: ValueConvertible { public var strataValue: StoredValue { .string(self) } }
extension Date: ValueConvertible { public var strataValue: StoredValue { .date(self) } }
extension UUID: ValueConvertible { public var strataValue: StoredValue { .uuid(self) } }
extension Array: ValueConvertible where Element == UInt8 { public var strataValue: StoredValue { .binary(self) } }
extension Data: ValueConvertible { public var strataValue: StoredValue { .binary([UInt8](self)) } }
extension Optional: ValueConvertible where Wrapped: ValueConvertible {
    /// The wrapped value's ``StoredValue``, or ``StoredValue/null`` when `nil`.
    public var strataValue: StoredValue { self?.strataValue ?? .null }
}
