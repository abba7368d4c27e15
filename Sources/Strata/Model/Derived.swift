import StrataRecords

/// A derived attribute: computed by the store at save from `expression` (see the record
/// layer's `Derived`: `items.@count`, `items.amount.@sum`, `lowercase:(name)`,
/// `canonical:(name)`, `list.name`, `now()`, arithmetic). Read-only: assigning one does not
/// compile. Objects show new values after their context saves or merges a save.
///
/// ```swift
/// @Derived("items.@count") var itemCount: Int64
/// @Derived("canonical:(name)", .indexed) var searchName: String
/// ```
///
/// A `canonical:` attribute holds folded text: match it with `[cd]` (`searchName BEGINSWITH[cd]
/// %@`, or the builder's `options: [.caseInsensitive, .diacriticInsensitive]`), which folds the
/// argument too; without options the argument is compared as given.
@propertyWrapper
public struct Derived<Value: PersistentValue>: ManagedPropertyWrapper {
    /// Gives the wrapper a distinct offset (see ``Attribute``).
    @usableFromInline var distinctOffset: UInt8 = 0

    /// Declares a derived attribute computed from `expression`; `.indexed` gives it a fetch index.
    @inlinable
    public init(_ expression: String, _ options: AttributeOptions = [], originalName: String? = nil) {
        if SchemaCapture.isCapturing { Self.declare(expression, options, originalName) }
    }

    @usableFromInline
    static func declare(_ expression: String, _ options: AttributeOptions, _ originalName: String?) {
        SchemaCapture.record(.derived(DerivedDeclaration(
            bridge: ValueBridge(Value.self), type: Value.attributeType, isOptional: Value.isOptional,
            expression: expression, options: options, renamedFrom: originalName)))
    }

    /// Reads the derived value of `object`.
    @inlinable @inline(__always)
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: KeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        object._attributeValue(slot: ManagedObject._slot(in: object, storageKeyPath), as: Value.self)
    }

    /// Not available: the property is read through its object.
    @available(*, unavailable, message: "@Derived properties belong to ManagedObject subclasses")
    public var wrappedValue: Value { fatalError("unreachable") }
}
