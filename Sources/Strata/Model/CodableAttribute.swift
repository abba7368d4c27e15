import StrataRecords

/// A stored attribute whose value is any `Codable` type — a struct, an enum, an array, a
/// dictionary — as SwiftData's Codable attributes and Core Data's transformable ones.
///
/// ```swift
/// @CodableAttribute var tags: [String] = []
/// @CodableAttribute var settings = Settings()
/// @CodableAttribute var place: Place?          // optional: nil until set
/// ```
///
/// The value is stored as its JSON encoding, keys sorted, in a binary attribute (decision 67),
/// so a store stays readable without Swift. Change tracking compares encodings: setting an equal
/// value is no change. A predicate compares the whole value,
/// `PropertyPath(\Note.tags) == (try StoredValue(encoding: ["a", "b"]))`, or `== nil`.
///
/// Reading decodes the stored JSON. JSON another version of the type wrote that does not decode
/// reads as the default (a read cannot throw); `try object.value(forKey:)` throws
/// `StrataError.invalidObject` with the decoder's reason. Setting a value that cannot be encoded
/// (a `Double.nan`) changes nothing and the next save throws `StrataError.validation`.
@propertyWrapper
public struct CodableAttribute<Value: Codable>: ManagedPropertyWrapper {
    /// A byte that gives each wrapper a distinct offset in its object (see ``Attribute``).
    @usableFromInline var distinctOffset: UInt8 = 0

    /// Declares the attribute; its initial value is what a new object starts with (and what a
    /// value that does not decode reads as): `@CodableAttribute var tags: [String] = []`. An
    /// optional one starts as nil unless given another value. `options` as ``Attribute``'s;
    /// `originalName` is its name in the previous model version (lightweight migration). The
    /// initial value's expression runs at every object's `init()` (faults included): keep it cheap.
    public init(wrappedValue defaultValue: Value, _ options: AttributeOptions = [], originalName: String? = nil) {
        if SchemaCapture.isCapturing {
            Self.declare(defaultValue, isOptional: Value.self is any OptionalUnwrapping.Type, options, originalName)
        }
    }

    private static func declare(_ defaultValue: Value, isOptional: Bool, _ options: AttributeOptions,
                                _ originalName: String?) {
        // A default that cannot be encoded is none: the save then asks for a value.
        let stored = (try? StoredValue(encoding: defaultValue)) ?? .null
        var declaration = AttributeDeclaration(
            bridge: ValueBridge(codable: Value.self, fallback: defaultValue), type: .binary, isOptional: isOptional,
            options: options, defaultValue: stored == .null ? nil : stored, validation: [], renamedFrom: originalName)
        declaration.codableDefault = .some(defaultValue as Any)   // boxed: an optional default is a nil inside
        SchemaCapture.record(.attribute(declaration))
    }

    /// Reads and writes the attribute of `object`.
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        get { object._codableValue(slot: ManagedObject._slot(in: object, storageKeyPath), as: Value.self) }
        set { object._setCodableValue(newValue, slot: ManagedObject._slot(in: object, storageKeyPath)) }
    }

    /// Not available: the property is read through its object.
    @available(*, unavailable, message: "@CodableAttribute properties belong to ManagedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unreachable") }
        set { fatalError("unreachable") }
    }
}

