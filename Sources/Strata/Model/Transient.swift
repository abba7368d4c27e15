import StrataRecords

/// A transient attribute of a ``ManagedObject`` subclass: modelled, never stored.
///
/// ```swift
/// @Transient var isSelected: Bool            // starts false (the type's default)
/// @Transient(default: "draft") var mode: String
/// @Transient var note: String?               // starts nil
/// ```
///
/// Setting one makes the object (and its context) changed: ``ManagedObject/changedValues()``
/// names it, ``ManagedObject/hasPersistentChangedValues`` does not, and a save writes nothing
/// for it. It keeps its value through saves, merges and `refresh(_:mergeChanges: true)`; it
/// goes back to its default on `refresh(_:mergeChanges: false)`, when the object turns into a
/// fault, on ``ModelContext/rollback()`` and on ``ModelContext/refreshAllObjects()``. An awake
/// hook may set a starting value with ``ManagedObject/setPrimitiveValue(_:forKey:)``: there it
/// is a baseline, not a change. A store predicate that names it fails
/// (`StrataError.invalidFetch`); an in-memory filter may use it.
@propertyWrapper
public struct Transient<Value: PersistentValue>: ManagedPropertyWrapper {
    /// Gives the wrapper a distinct offset (see ``Attribute``).
    @usableFromInline var distinctOffset: UInt8 = 0

    /// Declares the transient attribute; `default` is its value in a new or reset object
    /// (else nil for an optional type, and the type's zero value, `""`, `false`… otherwise).
    @inlinable
    public init(default defaultValue: Value? = nil) {
        if SchemaCapture.isCapturing { Self.declare(defaultValue) }
    }

    @usableFromInline
    static func declare(_ defaultValue: Value?) {
        SchemaCapture.record(.attribute(AttributeDeclaration(
            bridge: ValueBridge(Value.self), type: Value.attributeType, isOptional: Value.isOptional, options: [],
            defaultValue: defaultValue?.storedValue ?? (Value.isOptional ? nil : Value.placeholder.storedValue),
            validation: [], renamedFrom: nil, isTransient: true)))
    }

    /// Reads and writes the transient attribute of `object`.
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
    @available(*, unavailable, message: "@Transient properties belong to ManagedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unreachable") }
        set { fatalError("unreachable") }
    }
}
