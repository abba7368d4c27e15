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
    public init<Inverse>(deleteRule: DeleteRule = .nullify, inverse: KeyPath<Value.Target, Inverse>,
                         optional: Bool = true, originalName: String? = nil) {
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
            let slot = ManagedObject._slot(in: object, storageKeyPath)
            if object._isProbe {
                // A to-one hands on a probe of its target, so a chain (`\Item.list?.name`) goes on.
                return Value(relationshipObjects: object.probeTarget(slot: slot, Value.Target.self,
                                                                     isToMany: Value.isToMany))
            }
            if Value.isToMany { return Value(relationshipObjects: object._members(slot: slot)) }
            return Value(relationshipTarget: object._target(slot: slot))
        }
        @inline(__always) set {
            let slot = ManagedObject._slot(in: object, storageKeyPath)
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

/// Converts between a relationship property's Swift type (`Target?`, `Set<Target>`,
/// `[Target]`) and the objects it holds, for the key-based API.
struct RelationshipBridge {
    var toSwift: ([ManagedObject]) -> Any
    /// The objects `any` holds, or nil when it is not a value of the property's type (nor a
    /// `ManagedObject` of the target class for a to-one, nor a collection of them for a to-many).
    var fromSwift: (Any?) -> [ManagedObject]?

    init<V: RelationshipValue>(_ type: V.Type) {
        toSwift = { V(relationshipObjects: $0) }
        fromSwift = { any in
            guard let any else { return [] }  // nil empties a to-many, clears a to-one
            if let value = any as? V { return value.relationshipObjects }
            if V.isToMany {
                if let set = any as? Set<V.Target> { return Array(set) }
                if let array = any as? [V.Target] { return array }
                if let array = any as? [ManagedObject], array.allSatisfy({ $0 is V.Target }) { return array }
                return nil
            }
            if let target = any as? V.Target { return [target] }
            return nil
        }
    }
}
