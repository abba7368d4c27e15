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
public struct Attribute<Value: PersistentValue>: ManagedPropertyWrapper, SlotCachingWrapper {
    /// The slot of the property plus one, once an access resolved it (0: not yet). Also what
    /// gives each wrapper a distinct offset, so storage key paths tell properties apart.
    @usableFromInline var slotCache: UInt8 = 0

    /// Declares the attribute. `default` is the value a new object starts with; `validation`
    /// rules are checked at save; `originalName` is its name in the previous model version
    /// (lightweight migration).
    @inlinable
    public init(_ options: AttributeOptions = [], default defaultValue: Value? = nil, validation: [ValidationRule] = [],
                originalName: String? = nil) {
        if SchemaCapture.isCapturing { Self.declare(options, defaultValue, validation, originalName) }
    }

    @usableFromInline
    static func declare(_ options: AttributeOptions, _ defaultValue: Value?, _ validation: [ValidationRule], _ originalName: String?) {
        SchemaCapture.record(.attribute(AttributeDeclaration(
            bridge: ValueBridge(Value.self), type: Value.attributeType, isOptional: Value.isOptional, options: options,
            defaultValue: defaultValue?.storedValue, validation: validation, renamedFrom: originalName)))
    }

    /// Reads and writes the attribute of `object`. Inlinable: in the model class's own
    /// (specialized) code the slot cache is a field load, not a key-path projection.
    @inlinable
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        // Always inlined: only in the property's own accessor is the storage key path a
        // constant, so the slot cache becomes a field access instead of a key-path projection.
        @inline(__always) get { object._attributeValue(storageKeyPath, as: Value.self) }
        @inline(__always) set { object._setAttributeValue(newValue, storageKeyPath) }
    }

    /// Not available: the property is read through its object.
    @available(*, unavailable, message: "@Attribute properties belong to ManagedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unreachable") }
        set { fatalError("unreachable") }
    }
}

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
public struct Derived<Value: PersistentValue>: ManagedPropertyWrapper, SlotCachingWrapper {
    @usableFromInline var slotCache: UInt8 = 0

    /// Declares a derived attribute computed from `expression`; `.indexed` gives it a fetch index.
    @inlinable
    public init(_ expression: String, _ options: AttributeOptions = [], originalName: String? = nil) {
        if SchemaCapture.isCapturing { Self.declare(expression, options, originalName) }
    }

    @usableFromInline
    static func declare(_ expression: String, _ options: AttributeOptions, _ originalName: String?) {
        SchemaCapture.record(.derived(DerivedDeclaration(
            bridge: ValueBridge(Value.self), type: Value.attributeType, isOptional: Value.isOptional, expression: expression,
            options: options, renamedFrom: originalName)))
    }

    /// Reads the derived value of `object`.
    @inlinable @inline(__always)
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: KeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        object._attributeValue(storageKeyPath, as: Value.self)
    }

    /// Not available: the property is read through its object.
    @available(*, unavailable, message: "@Derived properties belong to ManagedObject subclasses")
    public var wrappedValue: Value { fatalError("unreachable") }
}

/// A wrapper that remembers its property's slot after the first access.
@usableFromInline
protocol SlotCachingWrapper {
    /// The slot plus one (0: unknown).
    var slotCache: UInt8 { get set }
}
