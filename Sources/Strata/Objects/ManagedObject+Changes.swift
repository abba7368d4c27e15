import StrataRecords

// What an object changed, what it last read from the store, and its relationships seen as
// identifiers: Core Data's change-inspection API. Dictionaries map property names to Swift
// values as ``ManagedObject/value(forKey:)`` gives them; a property whose value is nil maps to
// a boxed nil (the key is present, `dict[key] as? T` is nil). Derived attributes are the
// store's: they never count as changes.

extension ManagedObject {
    /// The persistent properties changed since the object was last fetched or saved, with their
    /// new values: for an inserted object (or one in no context), every property set away from
    /// its initial value. A to-many changed through its inverse (`item.list = list` changes
    /// `list.items`) counts. Never fires a fault (a fault has no changes).
    public final func changedValues() -> [String: Any] {
        var result: [String: Any] = [:]
        for slot in changedSlots() { result[entitySchema.properties[slot].name] = entryValue(slot: slot) }
        return result
    }

    /// The persistent properties changed since the context last processed its pending changes
    /// (``ModelContext/processPendingChanges()``, a save, a rollback), with their new values:
    /// the changes of the current event. Primitive sets (``setPrimitiveValue(_:forKey:)``) are
    /// not events. Computed properties
    /// (``ModelObject/computed(_:dependsOn:value:)-(_,PartialKeyPath<Self>...,_)``,
    /// ``ModelObject/cached(_:dependsOn:value:)-(_,PartialKeyPath<Self>...,_)``) whose
    /// dependencies changed are named too, with nil (their values are computed when read).
    /// Never fires a fault.
    public final func changedValuesForCurrentEvent() -> [String: Any] {
        let slots = eventChangedSlots
        let computed = _extras?.computedEvents ?? []
        guard !slots.isEmpty || !computed.isEmpty else { return [:] }
        var result: [String: Any] = [:]
        let schema = entitySchema
        slots.forEach { slot in
            guard schema.slotKinds[slot] != .derived else { return }
            result[schema.propertyNames[slot]] = entryValue(slot: slot)
        }
        // A computed property whose dependency changed: named, with no value (reading it
        // here would compute it, or fill the cache the change just dropped).
        for name in computed where result[name] == nil { result[name] = Optional<Any>.none as Any }
        return result
    }

    /// The values the object last fetched from or saved to the store, for `keys` (nil: every
    /// persistent property, derived ones included). Empty for an object not saved yet. Fires
    /// the fault (the committed values are the row's). To-many values are the store's members,
    /// without this context's unsaved changes.
    ///
    /// Throws `StrataError.invalidArgument` for a key that names no persistent property.
    public final func committedValues(forKeys keys: [String]?) throws -> [String: Any] {
        let slots = try keys.map { try $0.map { try slot(forKey: $0) } } ?? Array(entitySchema.properties.indices)
        guard let context, !isInserted, _rawID > 0 else { return [:] }
        _prepareValues()
        var result: [String: Any] = [:]
        for slot in slots {
            let property = entitySchema.properties[slot]
            let stored: Any?
            switch property.kind {
            case .attribute(let attribute):
                stored = _snapshot.isEmpty ? nil : Self.swiftValue(_snapshot[slot], attribute.bridge)
            case .derived(let derived):
                stored = _snapshot.isEmpty ? nil : Self.swiftValue(_snapshot[slot], derived.bridge)
            case .toOne:
                stored = _snapshot.isEmpty ? nil : context.target(of: _snapshot[slot], slot: slot, of: self) as Any?
            case .toMany(let relationship):
                stored = relationship.bridge.toSwift(context.storeMemberRaws(slot: slot, of: self).compactMap {
                    context.object(raw: $0, slot: slot, of: self)
                })
            }
            result[property.name] = stored ?? (Optional<Any>.none as Any)
        }
        return result
    }

    /// Whether the object's persistent properties differ from its committed values
    /// (``changedValues()`` names a property other than a transient one). Never fires a fault.
    public final var hasPersistentChangedValues: Bool {
        let kinds = entitySchema.slotKinds
        return changedSlots().contains { kinds[$0] != .transient }
    }

    /// The identifiers of the objects in the relationship named `name`, with this context's
    /// unsaved changes: read from the store's relationship index, without firing (or
    /// registering) the members. A to-one gives zero or one identifier (firing this object's
    /// fault: the target's identity is in its row).
    ///
    /// Throws `StrataError.invalidArgument` when `name` is not a relationship of the class.
    public final func objectIDs(forRelationshipNamed name: String) throws -> [ManagedObjectID] {
        let slot = try relationshipSlot(name)
        let schema = entitySchema
        let targetName = EntitySchema.of(schema.relationship(at: slot)!.target).name
        if schema.properties[slot].isToMany {
            if let context {
                return context.memberRaws(slot: slot, of: self).map {
                    ManagedObjectID(entityName: targetName, rawValue: $0)
                }
            }
            return _members(slot: slot).map(\.objectID)
        }
        return _target(slot: slot).map { [$0.objectID] } ?? []
    }

    /// Whether reading the relationship named `name` would read the store: a to-many whose
    /// members were not read since the store last changed (or since the object was refreshed),
    /// a to-one of a fault, or a to-one whose target is a fault. Never fires a fault.
    ///
    /// Throws `StrataError.invalidArgument` when `name` is not a relationship of the class.
    public final func hasFault(forRelationshipNamed name: String) throws -> Bool {
        let slot = try relationshipSlot(name)
        guard let context else { return false }
        if entitySchema.properties[slot].isToMany {
            if isInserted { return false }
            return !context.hasCurrentStoreMembers(slot: slot, of: self)
        }
        if isFault { return true }
        guard slot < _values.count, case .int(let raw) = _values[slot] else { return false }
        return context.registeredObject(raw: raw, slot: slot, of: self)?.isFault ?? true
    }

    // MARK: Internals

    private func relationshipSlot(_ name: String) throws -> Int {
        let slot = try slot(forKey: name)
        guard entitySchema.properties[slot].isRelationship else {
            throw StrataError.invalidArgument("'\(name)' is an attribute of \(entitySchema.name), not a relationship")
        }
        return slot
    }

    /// The slots of persistent properties that differ from the committed values (from the
    /// initial values for an object not saved yet).
    ///
    /// A save asks this of every object it writes (validation), so it reads the schema's
    /// one-byte slot kinds rather than copying each slot's ``EntitySchema/Property``, and asks
    /// an inserted object's to-many whether it has members rather than listing them.
    final func changedSlots() -> [Int] {
        var slots: [Int] = []
        changedSlots(into: &slots)
        return slots
    }

    /// ``changedSlots()`` into `slots` (emptied first, its capacity kept): a save's loop over
    /// its objects reuses one array.
    final func changedSlots(into slots: inout [Int]) {
        slots.removeAll(keepingCapacity: true)
        guard !isFault else { return }
        let schema = entitySchema
        let context = self.context
        let inserted = isInserted
        let values = _values
        let base = _snapshot.isEmpty ? schema.initialValues : _snapshot
        let kinds = schema.slotKinds
        values.withUnsafeBufferPointer { valueBuffer in
            base.withUnsafeBufferPointer { baseBuffer in
                for slot in kinds.indices {
                    switch kinds[slot] {
                    case .derived:
                        continue
                    case .toMany:
                        if context != nil, !inserted {
                            if _extras?.changedToMany.contains(slot) == true { slots.append(slot) }
                        } else if let context {
                            if context.hasMembers(slot: slot, ofInserted: self) { slots.append(slot) }
                        } else if _extras?.detachedToMany[slot]?.isEmpty == false {
                            slots.append(slot)
                        }
                    case .toOne where context == nil:
                        if _extras?.detachedToOne[slot] != nil { slots.append(slot) }
                    default:
                        if slot < valueBuffer.count, slot < baseBuffer.count,
                           !StoredValue.identical(valueBuffer, slot, baseBuffer, slot) { slots.append(slot) }
                    }
                }
            }
        }
    }
}
