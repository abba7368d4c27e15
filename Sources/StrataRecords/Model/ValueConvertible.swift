import Foundation

/// Swift values that convert to a ``Value``: literals in models, arguments in inserts.
public protocol ValueConvertible: Sendable {
    /// The value as the record layer stores and compares it.
    var strataValue: Value { get }
}

extension Value: ValueConvertible { public var strataValue: Value { self } }
extension Bool: ValueConvertible { public var strataValue: Value { .bool(self) } }
extension Int: ValueConvertible { public var strataValue: Value { .int(Int64(self)) } }
extension Int64: ValueConvertible { public var strataValue: Value { .int(self) } }
extension Int32: ValueConvertible { public var strataValue: Value { .int(Int64(self)) } }
extension Int16: ValueConvertible { public var strataValue: Value { .int(Int64(self)) } }
extension Double: ValueConvertible { public var strataValue: Value { .double(self) } }
extension Decimal: ValueConvertible { public var strataValue: Value { .decimal(self) } }
extension String: ValueConvertible { public var strataValue: Value { .string(self) } }
extension Date: ValueConvertible { public var strataValue: Value { .date(self) } }
extension UUID: ValueConvertible { public var strataValue: Value { .uuid(self) } }
extension Array: ValueConvertible where Element == UInt8 { public var strataValue: Value { .binary(self) } }
extension Data: ValueConvertible { public var strataValue: Value { .binary([UInt8](self)) } }
extension Optional: ValueConvertible where Wrapped: ValueConvertible {
    /// The wrapped value's ``Value``, or ``Value/null`` when `nil`.
    public var strataValue: Value { self?.strataValue ?? .null }
}
