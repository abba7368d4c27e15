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
