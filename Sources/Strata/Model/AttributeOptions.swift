/// Options of an ``Attribute`` or ``Derived`` property.
public struct AttributeOptions: OptionSet, Sendable {
    public let rawValue: UInt8
    /// Creates options from their raw bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// No two objects of the entity may hold equal values (checked at save:
    /// `StrataError.conflict`).
    public static let unique = AttributeOptions(rawValue: 1)
    /// The attribute has a fetch index: predicates and sorts on it use it.
    public static let indexed = AttributeOptions(rawValue: 2)
}
