import StrataRecords

/// A relationship of a ``ManagedObject`` subclass: to-one (`Target?`), or to-many
/// (`Set<Target>` or `[Target]`, the array in primary-key order). Both sides of a relationship
/// are declared; `inverse` names the other side on one of them (or on both).
///
/// ```swift
/// @Relationship(deleteRule: .cascade, inverse: \Item.list) var items: Set<Item>
/// @Relationship var list: TodoList?
/// @Relationship(inverse: \Tag.items) var tags: Set<Tag>          // many-to-many
/// ```
///
/// Changing either side changes the other at once (`item.list = l` puts `item` in `l.items`).
/// A to-many relationship is a fault until read; reading it makes its members faults, without
/// reading their rows.
@propertyWrapper
public struct Relationship<Value: RelationshipValue>: ManagedPropertyWrapper, SlotCachingWrapper {
    @usableFromInline var slotCache: UInt8 = 0

    /// Declares the relationship. `deleteRule` says what deleting this object does to the
    /// objects it reaches; `optional: false` makes a to-one required at save.
    @inlinable
    public init(deleteRule: DeleteRule = .nullify, optional: Bool = true, originalName: String? = nil) {
        if SchemaCapture.isCapturing { Self.declare(deleteRule, optional, originalName) }
    }

    @usableFromInline
    static func declare(_ deleteRule: DeleteRule, _ optional: Bool, _ originalName: String?) {
        SchemaCapture.record(.relationship(RelationshipDeclaration(
            target: Value.Target.self, isToMany: Value.isToMany, isOptional: optional || Value.isToMany,
            deleteRule: deleteRule, inverse: nil, renamedFrom: originalName, bridge: RelationshipBridge(Value.self))))
    }

    /// Declares the relationship and its inverse, the property of the target class that
    /// reaches back (`\Item.list`).
    @inlinable
    public init<Inverse>(deleteRule: DeleteRule = .nullify, inverse: KeyPath<Value.Target, Inverse>, optional: Bool = true,
                         originalName: String? = nil) {
        if SchemaCapture.isCapturing { Self.declare(deleteRule, inverse, optional, originalName) }
    }

    @usableFromInline
    static func declare<Inverse>(_ deleteRule: DeleteRule, _ inverse: KeyPath<Value.Target, Inverse>, _ optional: Bool,
                                 _ originalName: String?) {
        SchemaCapture.record(.relationship(RelationshipDeclaration(
            target: Value.Target.self, isToMany: Value.isToMany, isOptional: optional || Value.isToMany,
            deleteRule: deleteRule, inverse: { ManagedObject.probeName(of: inverse) }, renamedFrom: originalName,
            bridge: RelationshipBridge(Value.self))))
    }

    /// Reads and writes the relationship of `object`.
    @inlinable
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        @inline(__always) get {
            if object._isProbe {
                // A to-one hands on a probe of its target, so a chain (`\Item.list?.name`) goes on.
                return Value(relationshipObjects: object.probeTarget(storageKeyPath, Value.Target.self, isToMany: Value.isToMany))
            }
            let slot = object._slot(storageKeyPath)
            if Value.isToMany { return Value(relationshipObjects: object._members(slot: slot)) }
            return Value(relationshipObjects: object._target(slot: slot).map { [$0] } ?? [])
        }
        @inline(__always) set {
            let slot = object._slot(storageKeyPath)
            if Value.isToMany {
                object._setMembers(newValue.relationshipObjects, slot: slot)
            } else {
                object._setTarget(newValue.relationshipObjects.first, slot: slot)
            }
        }
    }

    /// Not available: the property is read through its object.
    @available(*, unavailable, message: "@Relationship properties belong to ManagedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unreachable") }
        set { fatalError("unreachable") }
    }
}

/// The Swift types a ``Relationship`` property can have: `Target?` (to-one), `Set<Target>`
/// and `[Target]` (to-many).
public protocol RelationshipValue {
    /// The model class the relationship reaches.
    associatedtype Target: ManagedObject
    /// Whether the relationship reaches many objects.
    static var isToMany: Bool { get }
    /// The value holding `relationshipObjects` (each a `Target`).
    init(relationshipObjects: [ManagedObject])
    /// The objects the value holds.
    var relationshipObjects: [ManagedObject] { get }
}

extension Optional: RelationshipValue where Wrapped: ManagedObject {
    public typealias Target = Wrapped
    public static var isToMany: Bool { false }
    public init(relationshipObjects: [ManagedObject]) { self = relationshipObjects.first as? Wrapped }
    public var relationshipObjects: [ManagedObject] { self.map { [$0] } ?? [] }
}

extension Set: RelationshipValue where Element: ManagedObject {
    public typealias Target = Element
    public static var isToMany: Bool { true }
    public init(relationshipObjects: [ManagedObject]) { self = Set(relationshipObjects.compactMap { $0 as? Element }) }
    public var relationshipObjects: [ManagedObject] { Array(self) }
}

extension Array: RelationshipValue where Element: ManagedObject {
    public typealias Target = Element
    public static var isToMany: Bool { true }
    public init(relationshipObjects: [ManagedObject]) { self = relationshipObjects.compactMap { $0 as? Element } }
    public var relationshipObjects: [ManagedObject] { self }
}

extension ManagedObject {
    /// The name of the relationship `keyPath` reads, found by reading it on a probe prototype.
    static func probeName<Root: ManagedObject, Inverse>(of keyPath: KeyPath<Root, Inverse>) -> String? {
        probePath(of: keyPath).first
    }

    /// The persistent property names `keyPath` reads, in order (`\Item.list?.name`: `list`,
    /// `name`), found by reading it on a probe prototype.
    static func probePath<Root: ManagedObject>(of keyPath: PartialKeyPath<Root>) -> [String] {
        let recorder = ProbeRecorder()
        _ = makeProbe(Root.self, recorder)[keyPath: keyPath]
        return recorder.names
    }

    static func makeProbe<T: ManagedObject>(_ type: T.Type, _ recorder: ProbeRecorder) -> T {
        let prototype = T()
        prototype._flags.insert(.probe)
        prototype.extras.probe = recorder
        return prototype
    }

    /// A probe's to-one read: records the name and gives a probe of the target (none for a
    /// to-many, which ends a chain).
    @usableFromInline
    final func probeTarget<T: ManagedObject>(_ storage: AnyKeyPath, _ target: T.Type, isToMany: Bool) -> [ManagedObject] {
        guard let recorder = recordProbe(storage), !isToMany else { return [] }
        return [ManagedObject.makeProbe(T.self, recorder)]
    }

    /// Records that a probe read the property whose wrapper `storage` reaches.
    @usableFromInline @discardableResult
    final func recordProbe(_ storage: AnyKeyPath) -> ProbeRecorder? {
        let recorder = _extras?.probe
        if let recorder, recorder.muted == 0, let name = EntitySchema.propertyName(ofStorage: storage) { recorder.names.append(name) }
        return recorder
    }
}

/// The property names reads of probe prototypes reported, in order.
@usableFromInline
final class ProbeRecorder {
    var names: [String] = []
    /// Above 0 while a computed property's body runs on the probe (its reads are not the path's).
    var muted = 0
    /// What is wrong with the dependencies of computed properties the probe read.
    var problems: [String] = []
}
