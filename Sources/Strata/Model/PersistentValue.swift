import Foundation
import StrataRecords

/// A Swift type an ``Attribute`` or ``Derived`` property can have: it names its
/// ``AttributeType`` and converts to and from the store's ``StoredValue``.
///
/// Conforming types: `Bool`, `Int`, `Int16`, `Int32`, `Int64`, `Double`, `Decimal`, `String`,
/// `Date`, `UUID`, `[UInt8]`, `Data`, and `Optional` of each (an optional attribute).
public protocol PersistentValue {
    /// The attribute type the value is stored as.
    static var attributeType: AttributeType { get }
    /// Whether `nil` is a value (an optional attribute).
    static var isOptional: Bool { get }
    /// What a property of this type reads as when the store holds no value for it (a required
    /// attribute not set yet, a fault that could not be fulfilled): `nil`, zero, empty.
    static var placeholder: Self { get }
    /// The value from the store's representation, or `nil` when it is of another kind.
    init?(storedValue: StoredValue)
    /// The value as the store keeps it.
    var storedValue: StoredValue { get }
}

extension PersistentValue {
    /// Not optional, unless the type says so.
    public static var isOptional: Bool { false }
}

extension Bool: PersistentValue {
    public static var attributeType: AttributeType { .bool }
    public static var placeholder: Bool { false }
    public init?(storedValue: StoredValue) {
        guard case .bool(let value) = storedValue else { return nil }
        self = value
    }
    public var storedValue: StoredValue { .bool(self) }
}

extension Int: PersistentValue {
    public static var attributeType: AttributeType { .int64 }
    public static var placeholder: Int { 0 }
    public init?(storedValue: StoredValue) {
        guard case .int(let integer) = storedValue, let exact = Int(exactly: integer) else { return nil }
        self = exact
    }
    public var storedValue: StoredValue { .int(Int64(self)) }
}

extension Int64: PersistentValue {
    public static var attributeType: AttributeType { .int64 }
    public static var placeholder: Int64 { 0 }
    public init?(storedValue: StoredValue) {
        guard case .int(let value) = storedValue else { return nil }
        self = value
    }
    public var storedValue: StoredValue { .int(self) }
}

extension Int32: PersistentValue {
    public static var attributeType: AttributeType { .int32 }
    public static var placeholder: Int32 { 0 }
    public init?(storedValue: StoredValue) {
        guard case .int(let integer) = storedValue, let exact = Int32(exactly: integer) else { return nil }
        self = exact
    }
    public var storedValue: StoredValue { .int(Int64(self)) }
}

extension Int16: PersistentValue {
    public static var attributeType: AttributeType { .int16 }
    public static var placeholder: Int16 { 0 }
    public init?(storedValue: StoredValue) {
        guard case .int(let integer) = storedValue, let exact = Int16(exactly: integer) else { return nil }
        self = exact
    }
    public var storedValue: StoredValue { .int(Int64(self)) }
}

extension Double: PersistentValue {
    public static var attributeType: AttributeType { .double }
    public static var placeholder: Double { 0 }
    public init?(storedValue: StoredValue) {
        switch storedValue {
        case .double(let double): self = double
        case .int(let integer): self = Double(integer)
        default: return nil
        }
    }
    public var storedValue: StoredValue { .double(self) }
}

extension Decimal: PersistentValue {
    public static var attributeType: AttributeType { .decimal }
    public static var placeholder: Decimal { 0 }
    public init?(storedValue: StoredValue) {
        switch storedValue {
        case .decimal(let decimal): self = decimal
        case .int(let integer): self = Decimal(integer)
        default: return nil
        }
    }
    public var storedValue: StoredValue { .decimal(self) }
}

extension String: PersistentValue {
    public static var attributeType: AttributeType { .string }
    public static var placeholder: String { "" }
    public init?(storedValue: StoredValue) {
        guard case .string(let value) = storedValue else { return nil }
        self = value
    }
    public var storedValue: StoredValue { .string(self) }
}

extension Date: PersistentValue {
    public static var attributeType: AttributeType { .date }
    public static var placeholder: Date { Date(timeIntervalSinceReferenceDate: 0) }
    public init?(storedValue: StoredValue) {
        guard case .date(let value) = storedValue else { return nil }
        self = value
    }
    public var storedValue: StoredValue { .date(self) }
}

extension UUID: PersistentValue {
    public static var attributeType: AttributeType { .uuid }
    public static var placeholder: UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
    public init?(storedValue: StoredValue) {
        guard case .uuid(let value) = storedValue else { return nil }
        self = value
    }
    public var storedValue: StoredValue { .uuid(self) }
}

extension Array: PersistentValue where Element == UInt8 {
    public static var attributeType: AttributeType { .binary }
    public static var placeholder: [UInt8] { [] }
    public init?(storedValue: StoredValue) {
        guard case .binary(let bytes) = storedValue else { return nil }
        self = bytes
    }
    public var storedValue: StoredValue { .binary(self) }
}

extension Data: PersistentValue {
    public static var attributeType: AttributeType { .binary }
    public static var placeholder: Data { Data() }
    public init?(storedValue: StoredValue) {
        guard case .binary(let bytes) = storedValue else { return nil }
        self = Data(bytes)
    }
    public var storedValue: StoredValue { .binary([UInt8](self)) }
}

extension Optional: PersistentValue where Wrapped: PersistentValue {
    public static var attributeType: AttributeType { Wrapped.attributeType }
    public static var isOptional: Bool { true }
    public static var placeholder: Wrapped? { nil }
    public init?(storedValue: StoredValue) {
        if case .null = storedValue { self = .none; return }
        guard let wrapped = Wrapped(storedValue: storedValue) else { return nil }
        self = .some(wrapped)
    }
    public var storedValue: StoredValue { self?.storedValue ?? .null }
}
