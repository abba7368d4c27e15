import Observation

extension ManagedObject: Observable {}

extension ManagedObject {
    /// What Swift Observation tracks for the property `name`: a key path of its own, since
    /// stored properties are reached through their wrappers and computed ones may live in
    /// extensions.
    static func observationKeyPath(_ name: String) -> KeyPath<ManagedObject, Int> {
        \ManagedObject.[_observationKey: name]
    }

    /// Not a property: the subscript `observationKeyPath(_:)` names.
    final subscript(_observationKey name: String) -> Int { 0 }

    /// Tells Swift Observation the property behind `key` was read. One registrar per class
    /// (decision 34): an object of its own would cost four allocations per loaded object; a
    /// tracked read may then also be woken by the same property of another object of the class
    /// (never missed, sometimes extra).
    @usableFromInline
    final func _trackAccess(_ key: KeyPath<ManagedObject, Int>) {
        _flags.insert(.observedAccess)
        entitySchema.registrar.access(self, keyPath: key)
    }

    /// Tells Swift Observation that the property in `slot` was read. Every reference on the way
    /// is borrowed, none counted: the schema and its key paths live as long as the process, and
    /// the retains and releases of the schema, its key path array and the key path were three
    /// pairs per property read (decision 49).
    @inline(__always)
    final func _trackAccess(slot: Int) {
        _flags.insert(.observedAccess)
        guard let schema = _schemaRef else { return _trackAccess(entitySchema.observationKeys[slot]) }
        schema._withUnsafeGuaranteedRef { borrowedSchema in
            borrowedSchema.observationKeyRefs[slot]._withUnsafeGuaranteedRef { key in
                borrowedSchema.registrar.access(self, keyPath: key)
            }
        }
    }
}
