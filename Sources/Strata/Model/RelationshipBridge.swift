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
            if let v = any as? V { return v.relationshipObjects }
            if V.isToMany {
                if let s = any as? Set<V.Target> { return Array(s) }
                if let a = any as? [V.Target] { return a }
                if let a = any as? [ManagedObject], a.allSatisfy({ $0 is V.Target }) { return a }
                return nil
            }
            if let t = any as? V.Target { return [t] }
            return nil
        }
    }
}
