import StrataRecords

// The paths property wrappers read and write through. An object in no context keeps its
// values (and its relationships, in `extras`) itself; an object in a context asks the
// context to fire its fault, resolve relationship targets and record changes.

extension ManagedObject {
    /// The slot of the property whose wrapper `storage` reaches (-1 if the schema has none),
    /// found by the key path's identity in the schema's table (decision 54). Nothing is cached
    /// in the object: most objects have each property read once or twice (a fetch, a
    /// traversal, a merge), and writing a per-object cache back through the key path cost an
    /// exclusivity check and a store on every first read (~110 instructions a property,
    /// callgrind, fetchall), more than the lookup it saved.
    @inlinable @inline(__always)
    final func _slot<Object: ManagedObject, W>(_ storage: ReferenceWritableKeyPath<Object, W>) -> Int {
        _slotIndex(ofStorage: storage)
    }

    /// The schema's slot for a wrapper's storage key path.
    @usableFromInline
    final func _slotIndex(ofStorage storage: AnyKeyPath) -> Int {
        // Borrowed: every property access resolves its slot through here.
        if let schema = _schemaRef { return schema._withUnsafeGuaranteedRef { $0.slot(forStorage: storage) } }
        return entitySchema.slot(forStorage: storage)
    }

    /// Whether this is a probe prototype (key-path resolution).
    @usableFromInline
    final var _isProbe: Bool { _flags.contains(.probe) }

    /// What an attribute wrapper's getter returns (`@Attribute`, `@Transient`, `@Derived`): on
    /// a probe prototype, a placeholder after recording the read.
    @inlinable @inline(__always)
    final func _attributeValue<Object: ManagedObject, W, V: PersistentValue>(
        _ storage: ReferenceWritableKeyPath<Object, W>, as type: V.Type
    ) -> V {
        if _isProbe { recordProbe(storage); return V.placeholder }
        return V(storedValue: _persistentValue(_slot(storage))) ?? V.placeholder
    }

    /// What an attribute wrapper's setter does.
    @inlinable @inline(__always)
    final func _setAttributeValue<Object: ManagedObject, W, V: PersistentValue>(
        _ value: V, _ storage: ReferenceWritableKeyPath<Object, W>
    ) {
        _setPersistentValue(value.storedValue, slot: _slot(storage))
    }

    /// Loads the values if the object is a fault, or gives a new object its initial values.
    @inline(__always)
    final func _prepareValues() {
        if _flags.contains(.fault) {
            if let context { context.fulfill(self) } else { _flags.remove(.fault) }
        }
        if _values.isEmpty { _values = entitySchema.initialValues }
    }

    /// The stored form of the property in `slot` (firing the fault first).
    @usableFromInline
    final func _persistentValue(_ slot: Int) -> StoredValue {
        _prepareValues()
        guard slot >= 0, slot < _values.count else { return .null }
        _trackAccess(slot: slot)
        return _values[slot]
    }

    /// Sets the property in `slot` and records the change.
    @usableFromInline
    final func _setPersistentValue(_ value: StoredValue, slot: Int) {
        guard slot >= 0 else { return }
        if let context {
            context.setValue(value, slot: slot, of: self)
        } else {
            _prepareValues()
            guard slot < _values.count, !_values[slot].isIdentical(to: value) else { return }
            ChangeBatch.set(value, slot: slot, of: self, in: nil)
        }
    }

    /// The target of the to-one relationship in `slot`.
    @usableFromInline
    final func _target(slot: Int, tracking: Bool = true) -> ManagedObject? {
        guard slot >= 0 else { return nil }
        if tracking { _trackAccess(slot: slot) }
        if let context { return context.target(slot: slot, of: self) }
        return _extras?.detachedToOne[slot]
    }

    /// Sets the to-one relationship in `slot` (and its inverse).
    @usableFromInline
    final func _setTarget(_ target: ManagedObject?, slot: Int) {
        guard slot >= 0 else { return }
        if let context = context ?? target?.context {
            context.setTarget(target, slot: slot, of: self)
        } else {
            ModelContext.setDetachedTarget(target, slot: slot, of: self)
        }
    }

    /// The members of the to-many relationship in `slot`.
    @usableFromInline
    final func _members(slot: Int, tracking: Bool = true) -> [ManagedObject] {
        guard slot >= 0 else { return [] }
        if tracking { _trackAccess(slot: slot) }
        if let context { return context.members(slot: slot, of: self) }
        return _extras?.detachedToMany[slot] ?? []
    }

    /// Replaces the members of the to-many relationship in `slot` (and the inverses).
    @usableFromInline
    final func _setMembers(_ members: [ManagedObject], slot: Int) {
        guard slot >= 0 else { return }
        if let context = context ?? members.lazy.compactMap(\.context).first {
            context.setMembers(members, slot: slot, of: self)
        } else {
            ModelContext.setDetachedMembers(members, slot: slot, of: self)
        }
    }
}
