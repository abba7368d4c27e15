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
    public init(relationshipTarget: ManagedObject?) {
        self.init(relationshipObjects: relationshipTarget.map { [$0] } ?? [])
    }
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
        self = ObjectIdentifier(type(of: target)) == ObjectIdentifier(Wrapped.self)
            ? unsafeDowncast(target, to: Wrapped.self) : target as? Wrapped
    }
    public var relationshipTarget: ManagedObject? { self }
}

extension Set: RelationshipValue where Element: ManagedObject {
    public typealias Target = Element
    public static var isToMany: Bool { true }
    public init(relationshipObjects: [ManagedObject]) {
        self = Set(ManagedObject.downcast(relationshipObjects, to: Element.self))
    }
    public var relationshipObjects: [ManagedObject] { Array(self) }
}

extension Array: RelationshipValue where Element: ManagedObject {
    public typealias Target = Element
    public static var isToMany: Bool { true }
    public init(relationshipObjects: [ManagedObject]) {
        self = ManagedObject.downcast(relationshipObjects, to: Element.self)
    }
    public var relationshipObjects: [ManagedObject] { self }
}

extension ManagedObject {
    /// `objects` as `[T]`, leaving out any that is not a `T`. Members of a relationship are
    /// instances of its target class itself almost always: each whose class is `T` exactly is
    /// converted with `unsafeDowncast` (safe after that identity check), and only a member of
    /// another class pays a dynamic `as?` cast through the runtime.
    static func downcast<T: ManagedObject>(_ objects: [ManagedObject], to type: T.Type) -> [T] {
        let target = ObjectIdentifier(T.self)
        var members: [T] = []
        members.reserveCapacity(objects.count)
        for object in objects {
            if ObjectIdentifier(Swift.type(of: object)) == target {
                members.append(unsafeDowncast(object, to: T.self))
            } else if let member = object as? T {
                members.append(member)
            }
        }
        return members
    }
}
