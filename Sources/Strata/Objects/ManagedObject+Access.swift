import StrataRecords

// The paths property wrappers read and write through. An object in no context keeps its
// values (and its relationships, in `extras`) itself; an object in a context asks the
// context to fire its fault, resolve relationship targets and record changes.

extension ManagedObject {
    /// The slot of the property whose wrapper `storage` reaches in `object` (-1 if the schema
    /// has none), found by where the wrapper lies in the object (decision 72).
    ///
    /// Inlined into the property's accessor, where `storage` is a constant key path to a stored
    /// field: the compiler reaches the field directly, so `offset` is a constant, no key path
    /// object is made, and (once no accessor of the field uses a key path at run time) no
    /// exclusivity check is made. The pointer is only subtracted, never read or written: the
    /// wrapper's field lies inside the object (a stored property, whose address the projection
    /// gives in any build), at the offset ``WrapperOffsets`` read from the class's metadata.
    @inlinable @inline(__always)
    static func _slot<Object: ManagedObject, W>(in object: Object, _ storage: ReferenceWritableKeyPath<Object, W>) -> Int {
        let offset = withUnsafeMutablePointer(to: &object[keyPath: storage]) {
            UnsafeRawPointer($0) - UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        }
        return object._slot(atOffset: offset)
    }

    /// The slot of the wrapper at `offset` bytes into this object (-1: none).
    @usableFromInline
    final func _slot(atOffset offset: Int) -> Int {
        // Borrowed: every property access resolves its slot through here.
        if let schema = _schemaRef { return schema._withUnsafeGuaranteedRef { $0.wrapperOffsets.slot(at: offset) } }
        return entitySchema.wrapperOffsets.slot(at: offset)
    }

    /// Whether this is a probe prototype (key-path resolution).
    @usableFromInline
    final var _isProbe: Bool { _flags.contains(.probe) }

    /// What an attribute wrapper's getter returns (`@Attribute`, `@Transient`, `@Derived`): on
    /// a probe prototype, a placeholder after recording the read.
    @inlinable @inline(__always)
    final func _attributeValue<V: PersistentValue>(slot: Int, as type: V.Type) -> V {
        V(storedValue: _persistentValue(slot)) ?? V.placeholder
    }

    /// Loads the values if the object is a fault, or gives a new object its initial values.
    @inline(__always)
    final func _prepareValues() {
        if _flags.contains(.fault) {
            if let context { context.fulfill(self) } else { _flags.remove(.fault) }
        }
        if _values.isEmpty { _values = entitySchema.initialValues }
    }

    /// The stored form of the property in `slot` (firing the fault first); on a probe
    /// prototype, `null` after recording the read.
    @usableFromInline
    final func _persistentValue(_ slot: Int) -> StoredValue {
        if _flags.contains(.probe) {
            recordProbe(slot: slot)
            return .null
        }
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
