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
public struct Relationship<Value: RelationshipValue>: ManagedPropertyWrapper {
    /// Gives the wrapper a distinct offset (see ``Attribute``).
    @usableFromInline var distinctOffset: UInt8 = 0

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
            return Value(relationshipTarget: object._target(slot: slot))
        }
        @inline(__always) set {
            let slot = object._slot(storageKeyPath)
            if Value.isToMany {
                object._setMembers(newValue.relationshipObjects, slot: slot)
            } else {
                object._setTarget(newValue.relationshipTarget, slot: slot)
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
    /// A to-one's value holding `relationshipTarget` (a `Target`, or nil).
    init(relationshipTarget: ManagedObject?)
    /// A to-one's target (the first object the value holds).
    var relationshipTarget: ManagedObject? { get }
}

extension RelationshipValue {
    /// The value holding `relationshipTarget` alone, or nothing.
    public init(relationshipTarget: ManagedObject?) { self.init(relationshipObjects: relationshipTarget.map { [$0] } ?? []) }
    /// The first object the value holds.
    public var relationshipTarget: ManagedObject? { relationshipObjects.first }
}

extension Optional: RelationshipValue where Wrapped: ManagedObject {
    public typealias Target = Wrapped
    public static var isToMany: Bool { false }
    public init(relationshipObjects: [ManagedObject]) { self.init(relationshipTarget: relationshipObjects.first) }
    public var relationshipObjects: [ManagedObject] { self.map { [$0] } ?? [] }
    // A to-one is read and set without an array around its target (an allocation per access).
    public init(relationshipTarget: ManagedObject?) {
        guard let target = relationshipTarget else { self = nil; return }
        self = ObjectIdentifier(type(of: target)) == ObjectIdentifier(Wrapped.self) ? unsafeDowncast(target, to: Wrapped.self) : target as? Wrapped
    }
    public var relationshipTarget: ManagedObject? { self }
}

extension Set: RelationshipValue where Element: ManagedObject {
    public typealias Target = Element
    public static var isToMany: Bool { true }
    public init(relationshipObjects: [ManagedObject]) { self = Set(ManagedObject.downcast(relationshipObjects, to: Element.self)) }
    public var relationshipObjects: [ManagedObject] { Array(self) }
}

extension Array: RelationshipValue where Element: ManagedObject {
    public typealias Target = Element
    public static var isToMany: Bool { true }
    public init(relationshipObjects: [ManagedObject]) { self = ManagedObject.downcast(relationshipObjects, to: Element.self) }
    public var relationshipObjects: [ManagedObject] { self }
}

extension ManagedObject {
    /// `objects` as `[T]`, leaving out any that is not a `T`. Members of a relationship are
    /// instances of its target class itself almost always: checked by their class's identity,
    /// the array is reused as it is (arrays of class references share one layout), where a
    /// `compactMap` with `as?` cast each member through the runtime (~1K instructions each in
    /// unspecialized code, callgrind, a traversal of 10,000 members).
    static func downcast<T: ManagedObject>(_ objects: [ManagedObject], to type: T.Type) -> [T] {
        let target = ObjectIdentifier(T.self)
        for o in objects where ObjectIdentifier(Swift.type(of: o)) != target {
            return objects.compactMap { $0 as? T }
        }
        return unsafeBitCast(objects, to: [T].self)
    }

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
