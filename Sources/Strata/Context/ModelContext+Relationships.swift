import StrataRecords
import StrataStorage

// Relationships inside a context. To-one targets are held as identities in the object's
// values (`.int(raw)`: a primary key, or a negative temporary identifier); to-many members
// are the store's members adjusted by this context's unsaved changes, computed when read, so
// both sides of a relationship always agree without storing either side twice.

extension ModelContext {
    func target(slot: Int, of object: ManagedObject) -> ManagedObject? {
        object._prepareValues()
        guard slot < object._values.count, case .int(let raw) = object._values[slot],
              let binding = binding(object), binding.targetEntity[slot] >= 0 else { return nil }
        return self.object(raw: raw, binding: container.bindings[binding.targetEntity[slot]])
    }

    /// Puts `other` (in no context yet) into this context, or records misuse when it is in another.
    func adopt(_ other: ManagedObject, by object: ManagedObject) -> Bool {
        if other.context == nil { insert(other) }
        guard other.context === self else {
            misuse.append(.misuse("\(other.objectID) belongs to another context "
                                  + "and cannot be related to \(object.objectID)"))
            return false
        }
        if other.isDeleted {
            misuse.append(.misuse("\(other.objectID) is deleted and cannot be related to \(object.objectID)"))
            return false
        }
        return true
    }

    func setTarget(_ target: ManagedObject?, slot: Int, of object: ManagedObject) {
        // One change for observers: the to-one, its inverse and the old and new partners.
        changeBatch.depth += 1
        defer { changeBatch.end() }
        if object.context == nil { insert(object) }
        guard object.context === self else {
            misuse.append(.misuse("\(object.objectID) belongs to another context than its new target"))
            return
        }
        if let target, !adopt(target, by: object) { return }
        guard let binding = binding(object), binding.targetEntity[slot] >= 0 else { return }
        let inverse = binding.inverseSlot[slot]
        let targetBinding = container.bindings[binding.targetEntity[slot]]
        // The slot's kind, not its declaration (a `Property` copied on every assignment).
        let inverseIsToOne = inverse >= 0 && targetBinding.schema.slotKinds[inverse] != .toMany
        let old = self.target(slot: slot, of: object)
        if old === target { return }
        setValue(target.map { .int($0._rawID) } ?? .null, slot: slot, of: object)
        if inverseIsToOne {
            // One-to-one: the old target lets go, the new one lets go of its old partner.
            if let old, old !== target, self.target(slot: inverse, of: old) === object {
                setValue(.null, slot: inverse, of: old)
            }
            if let target {
                if let partner = self.target(slot: inverse, of: target), partner !== object {
                    setValue(.null, slot: slot, of: partner)
                }
                setValue(.int(object._rawID), slot: inverse, of: target)
            }
        } else {
            if let old { markRelationshipChanged(old, slot: inverse) }
            if let target { markRelationshipChanged(target, slot: inverse) }
        }
    }

    /// A to-many side changed because of the other side: the object counts as changed (its
    /// `changedValues()` names the relationship), though nothing of its row is written.
    ///
    /// A fault is loaded first: an object with changes always holds its values (saves,
    /// merges and refreshes compare them with its snapshot).
    func markRelationshipChanged(_ object: ManagedObject, slot: Int) {
        guard slot >= 0, !object.isDeleted else { return }
        object._prepareValues()
        if ChangeBatch.isWatched(object) {
            // The membership has already changed (it is computed from the other side).
            changeBatch.depth += 1
            changeBatch.touch(object, object.entitySchema.propertyNames[slot])
            changeBatch.end()
        } else if object._flags.contains(.observedAccess) {
            // Swift Observation hears it too: a tracking closure that read the to-many waits on
            // it (it heard nothing here before decision 55's test asked).
            let schema = object.entitySchema
            schema.registrar.willSet(object, keyPath: schema.observationKeys[slot])
            schema.registrar.didSet(object, keyPath: schema.observationKeys[slot])
        }
        object.noteEventChange(slot: slot)
        object.extras.changedToMany.insert(slot)
        guard !object._flags.contains(.inserted), let binding = binding(object) else { return }
        if !object._flags.contains(.updated) {
            object._flags.insert(.updated)
            updated[key(object, binding)] = object
        }
    }

    /// The objects the relationship in `slot` reaches now: its members, or its target.
    func reached(slot: Int, of object: ManagedObject, isToMany: Bool) -> [ManagedObject] {
        isToMany ? members(slot: slot, of: object) : target(slot: slot, of: object).map { [$0] } ?? []
    }

    func members(slot: Int, of object: ManagedObject) -> [ManagedObject] {
        guard let binding = binding(object), binding.targetEntity[slot] >= 0 else { return [] }
        let targetBinding = container.bindings[binding.targetEntity[slot]]
        return memberRaws(slot: slot, of: object).map { self.object(raw: $0, binding: targetBinding) }
    }

    /// The identities of the members of the to-many in `slot`: the store's, adjusted by this
    /// context's unsaved changes; primary keys in order, then temporary identifiers in order
    /// of creation.
    func memberRaws(slot: Int, of object: ManagedObject) -> [Int64] {
        guard let binding = binding(object), let rel = binding.relationships[slot],
              binding.targetEntity[slot] >= 0 else { return [] }
        let targetBinding = container.bindings[binding.targetEntity[slot]]
        let inverse = binding.inverseSlot[slot]
        // Nothing unsaved can change membership: the store's members, already in key order.
        if inserted.isEmpty && updated.isEmpty && deleted.isEmpty && pendingLinks.isEmpty {
            return storeMemberRaws(slot: slot, of: object)
        }
        var raws = Set(storeMemberRaws(slot: slot, of: object))
        if rel.isManyToMany {
            for link in pendingLinks where link.owner === object && link.slot == slot {
                if link.added { raws.insert(link.member._rawID) } else { raws.remove(link.member._rawID) }
            }
        } else if inverse >= 0 {
            for group in [inserted, updated] {
                for (key, pending) in group where key.entity == targetBinding.index {
                    guard !pending._values.isEmpty, inverse < pending._values.count else { continue }
                    if case .int(let ownerRaw) = pending._values[inverse], ownerRaw == object._rawID {
                        raws.insert(pending._rawID)
                    } else {
                        raws.remove(pending._rawID)
                    }
                }
            }
        }
        for (key, _) in deleted where key.entity == targetBinding.index { raws.remove(key.raw) }
        return raws.sorted { lhs, rhs in (lhs < 0) == (rhs < 0) ? lhs.magnitude < rhs.magnitude : lhs > 0 }
    }

    /// The primary keys of the to-many's members in the store (none for an object not saved
    /// yet), kept per object and slot until the store changes: reading a relationship again
    /// reads no index, and ``ManagedObject/hasFault(forRelationshipNamed:)`` can tell.
    func storeMemberRaws(slot: Int, of object: ManagedObject) -> [Int64] {
        guard object._rawID > 0, !object._flags.contains(.inserted), let binding = binding(object),
              let rel = binding.relationships[slot] else {
            return []
        }
        do {
            let recordReader = try reader()
            let generation = reading?.transactionID ?? 0
            if let cached = object._extras?.storeMembers[slot], cached.generation == generation { return cached.raws }
            let keys = try recordReader.memberPrimaryKeys(of: rel.name, entityIndex: binding.index,
                                                          primaryKey: UInt64(object._rawID))
            var raws: [Int64] = []
            raws.reserveCapacity(keys.count)
            for key in keys where key <= UInt64(Int64.max) { raws.append(Int64(key)) }
            object.extras.storeMembers[slot] = StoreMembers(generation: generation, raws: raws)
            return raws
        } catch {
            object.extras.faultError = (error as? StrataError) ?? .invalidArgument("\(error)")
            return []
        }
    }

    /// Whether the to-many in `slot` was read from the commit the context would read now.
    func hasCurrentStoreMembers(slot: Int, of object: ManagedObject) -> Bool {
        guard let cached = object._extras?.storeMembers[slot], let current = reading,
              cached.generation == current.transactionID else { return false }
        return pinned || current.transactionID == container.store.lastCommitID
    }

    /// The object of the relationship in `slot`'s target entity with identity `raw`.
    func object(raw: Int64, slot: Int, of object: ManagedObject) -> ManagedObject? {
        guard let binding = binding(object), binding.targetEntity[slot] >= 0 else { return nil }
        return self.object(raw: raw, binding: container.bindings[binding.targetEntity[slot]])
    }

    /// The target a stored to-one value names (`.int(raw)`), or nil.
    func target(of value: StoredValue, slot: Int, of object: ManagedObject) -> ManagedObject? {
        guard case .int(let raw) = value else { return nil }
        return self.object(raw: raw, slot: slot, of: object)
    }

    /// The registered object of the relationship in `slot`'s target entity with identity
    /// `raw`, without making one.
    func registeredObject(raw: Int64, slot: Int, of object: ManagedObject) -> ManagedObject? {
        guard let binding = binding(object), binding.targetEntity[slot] >= 0 else { return nil }
        let raw = raw < 0 ? (permanentIDs[raw] ?? raw) : raw
        let key = Key(entity: container.bindings[binding.targetEntity[slot]].index, raw: raw)
        return registry[key]?.takeUnretainedValue()
    }

    func setMembers(_ newMembers: [ManagedObject], slot: Int, of object: ManagedObject) {
        changeBatch.depth += 1
        defer { changeBatch.end() }
        if object.context == nil { insert(object) }
        guard object.context === self, let binding = binding(object), let rel = binding.relationships[slot] else {
            misuse.append(.misuse("\(object.objectID) belongs to another context than its new members"))
            return
        }
        let wanted = newMembers.filter { adopt($0, by: object) }
        let current = members(slot: slot, of: object)
        let currentSet = Set(current.map(ObjectIdentifier.init))
        let wantedSet = Set(wanted.map(ObjectIdentifier.init))
        let removed = current.filter { !wantedSet.contains(ObjectIdentifier($0)) }
        let added = wanted.filter { !currentSet.contains(ObjectIdentifier($0)) }
        let inverse = binding.inverseSlot[slot]
        if rel.isManyToMany {
            for member in removed { link(object, slot: slot, member, inverse: inverse, added: false) }
            for member in added { link(object, slot: slot, member, inverse: inverse, added: true) }
        } else if inverse >= 0 {
            for member in removed where target(slot: inverse, of: member) === object {
                setTarget(nil, slot: inverse, of: member)
            }
            for member in added { setTarget(object, slot: inverse, of: member) }
        }
    }

    func link(_ object: ManagedObject, slot: Int, _ member: ManagedObject, inverse: Int, added: Bool) {
        recordingUndo?.recording.links.append((owner: object, slot: slot, member: member, added: added))
        pendingLinks.append(LinkChange(owner: object, slot: slot, member: member, added: added, isPrimary: true))
        if inverse >= 0 {
            pendingLinks.append(LinkChange(owner: member, slot: inverse, member: object, added: added,
                                           isPrimary: false))
        }
        markRelationshipChanged(object, slot: slot)
        markRelationshipChanged(member, slot: inverse)
    }

    // MARK: Objects in no context

    static func setDetachedTarget(_ target: ManagedObject?, slot: Int, of object: ManagedObject) {
        let schema = object.entitySchema
        guard slot < schema.properties.count, case .toOne = schema.properties[slot].kind else { return }
        let old = object._extras?.detachedToOne[slot]
        object.extras.detachedToOne[slot] = target
        // The inverse, found by name once the class of the target knows it.
        guard let inverseName = schema.inverseName(ofSlot: slot) else { return }
        if let old, let inverse = old.entitySchema.slotByName[inverseName] {
            if old.entitySchema.properties[inverse].isToMany {
                old.extras.detachedToMany[inverse]?.removeAll { $0 === object }
            } else if old._extras?.detachedToOne[inverse] === object {
                old._extras?.detachedToOne[inverse] = nil
            }
        }
        if let target, let inverse = target.entitySchema.slotByName[inverseName] {
            if target.entitySchema.properties[inverse].isToMany {
                if !(target.extras.detachedToMany[inverse] ?? []).contains(where: { $0 === object }) {
                    target.extras.detachedToMany[inverse, default: []].append(object)
                }
            } else {
                target.extras.detachedToOne[inverse] = object
            }
        }
    }

    static func setDetachedMembers(_ members: [ManagedObject], slot: Int, of object: ManagedObject) {
        let schema = object.entitySchema
        guard slot < schema.properties.count, case .toMany = schema.properties[slot].kind else { return }
        let old = object._extras?.detachedToMany[slot] ?? []
        object.extras.detachedToMany[slot] = members
        guard let inverseName = schema.inverseName(ofSlot: slot) else { return }
        for member in old where !members.contains(where: { $0 === member }) {
            if let inverse = member.entitySchema.slotByName[inverseName],
               member._extras?.detachedToOne[inverse] === object {
                member._extras?.detachedToOne[inverse] = nil
            }
        }
        for member in members {
            guard let inverse = member.entitySchema.slotByName[inverseName] else { continue }
            if member.entitySchema.properties[inverse].isToMany {
                if !(member.extras.detachedToMany[inverse] ?? []).contains(where: { $0 === object }) {
                    member.extras.detachedToMany[inverse, default: []].append(object)
                }
            } else {
                member.extras.detachedToOne[inverse] = object
            }
        }
    }

    /// Whether the to-many in `slot` of an inserted object has members: what
    /// `!members(slot:of:).isEmpty` answers (keep the two in step), without building the member
    /// list. An inserted object has no stored members, so with a to-one inverse its members are
    /// the pending objects whose inverse names it: the first one found answers. A many-to-many
    /// (members from pending links) takes the full list.
    func hasMembers(slot: Int, ofInserted object: ManagedObject) -> Bool {
        guard let binding = binding(object), let rel = binding.relationships[slot],
              binding.targetEntity[slot] >= 0 else { return false }
        let inverse = binding.inverseSlot[slot]
        guard !rel.isManyToMany, inverse >= 0, object._flags.contains(.inserted) else {
            return !memberRaws(slot: slot, of: object).isEmpty
        }
        let target = container.bindings[binding.targetEntity[slot]].index
        let raw = object._rawID
        for group in [inserted, updated] {
            for (key, pending) in group where key.entity == target {
                guard inverse < pending._values.count, case .int(let ownerRaw) = pending._values[inverse],
                      ownerRaw == raw else { continue }
                if deleted[Key(entity: key.entity, raw: pending._rawID)] == nil { return true }
            }
        }
        return false
    }
}

/// A to-many's members as one commit of the store holds them.
struct StoreMembers {
    /// The commit they were read from.
    var generation: UInt64
    var raws: [Int64]
}
