import StrataRecords

/// A stored attribute of a ``ManagedObject`` subclass.
///
/// ```swift
/// @Attribute var title: String
/// @Attribute(.unique) var code: String
/// @Attribute(default: 0, validation: [.minimum(0)]) var amount: Decimal
/// @Attribute var note: String?          // optional: may be nil at save
/// ```
///
/// Reading fires the object's fault; setting records a change (``ManagedObject/changedValues()``)
/// that the next save writes. The property's Swift type decides the attribute type
/// (``PersistentValue``); an optional type makes the attribute optional.
///
/// A required attribute without a default that was never set reads as its type's placeholder
/// (`""`, `0`, empty) and the save refuses it (`StrataError.validation` naming it);
/// ``ManagedObject/value(forKey:)`` returns nil for it, which tells "never set" from "empty".
@propertyWrapper
public struct Attribute<Value: PersistentValue>: ManagedPropertyWrapper {
    /// A byte that gives each wrapper an offset of its own in its object, which is how an
    /// accessor finds its slot (zero-sized wrappers could share an offset).
    @usableFromInline var distinctOffset: UInt8 = 0

    /// Declares the attribute. `default` is the value a new object starts with; `validation`
    /// rules are checked at save; `originalName` is its name in the previous model version
    /// (lightweight migration).
    @inlinable
    public init(_ options: AttributeOptions = [], default defaultValue: Value? = nil, validation: [ValidationRule] = [],
                originalName: String? = nil) {
        if SchemaCapture.isCapturing { Self.declare(options, defaultValue, validation, originalName) }
    }

    @usableFromInline
    static func declare(_ options: AttributeOptions, _ defaultValue: Value?, _ validation: [ValidationRule],
                        _ originalName: String?) {
        SchemaCapture.record(.attribute(AttributeDeclaration(
            bridge: ValueBridge(Value.self), type: Value.attributeType, isOptional: Value.isOptional, options: options,
            defaultValue: defaultValue?.storedValue, validation: validation, renamedFrom: originalName)))
    }

    /// Reads and writes the attribute of `object`. Inlinable: the model class's own accessor
    /// then reads the stored value with no generic call in between.
    @inlinable
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        // Always inlined into the property's own accessor, where the storage key path names a
        // field whose offset finds the slot.
        @inline(__always) get { object._attributeValue(slot: ManagedObject._slot(in: object, storageKeyPath), as: Value.self) }
        @inline(__always) set { object._setPersistentValue(newValue.storedValue, slot: ManagedObject._slot(in: object, storageKeyPath)) }
    }

    /// Not available: the property is read through its object.
    @available(*, unavailable, message: "@Attribute properties belong to ManagedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unreachable") }
        set { fatalError("unreachable") }
    }
}
