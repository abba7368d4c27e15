import StrataRecords

// Replaying a step: undo applies its values at the event's start, redo those at its end, through
// the context's own setters, inserts and deletes (decision 66).

extension ModelContext {
    func apply(_ step: UndoStep, undoing: Bool) {
        // One change for observers: each property heard once, with its final value.
        changeBatch.depth += 1
        if undoing {
            restoreAll(step.deleted.map { ($0.object, $0.values) }, redoing: false)
            for cut in step.severedLinks.reversed() { relink(cut, added: true) }
            for cut in step.severedToOnes.reversed() { reattach(cut) }
            for change in step.changes.reversed() { set(change.before, slot: change.slot, of: change.object) }
            for link in step.links.reversed() { relink(link, added: !link.added) }
            for entry in step.inserted.reversed() { remove(entry.object) }
        } else {
            restoreAll(step.inserted, redoing: true)
            for link in step.links { relink(link, added: link.added) }
            for change in step.changes { set(change.after, slot: change.slot, of: change.object) }
            // What the rules reached, the save's rules reach again.
            for entry in step.deleted where !entry.byRule { remove(entry.object) }
        }
        changeBatch.end()
        for object in objectsRelated(by: step) { settleChanges(of: object) }
        postObjectsDidChange()
    }

    /// The objects a step changes, and those whose to-manys its to-ones and links move.
    private func objectsRelated(by step: UndoStep) -> [ManagedObject] {
        var references: [UndoReference?] = []
        for change in step.changes {
            references.append(change.object)
            for value in [change.before, change.after] {
                if case .target(let target) = value { references.append(target) }
            }
        }
        for link in step.links + step.severedLinks { references += [link.owner, link.member] }
        for cut in step.severedToOnes { references += [cut.owner, cut.target] }
        var seen = Set<ObjectIdentifier>()
        return references.compactMap { $0?.object }.filter { seen.insert(ObjectIdentifier($0)).inserted }
    }

    /// The object a reference names: the one it holds, else the registered object (or a fault)
    /// of its identity; nil for an object released while it had only a temporary identity.
    private func resolve(_ reference: UndoReference) -> ManagedObject? {
        if let object = reference.object { return object }
        let raw = reference.raw < 0 ? (permanentIDs[reference.raw] ?? reference.raw) : reference.raw
        guard raw > 0, let binding = binding(of: reference) else { return nil }
        let wasRegistered = registry[Key(entity: binding.index, raw: raw)] != nil
        let found = object(raw: raw, binding: binding)
        if !wasRegistered {
            // A fault made here must name a row: one a save deleted names nothing to change.
            found._prepareValues()
            if found._extras?.faultError != nil { return nil }
        }
        undoRecorder?.bind(reference, to: found)
        return found
    }

    /// The binding of the entity a reference's object belongs to.
    private func binding(of reference: UndoReference) -> EntityBinding? {
        reference.entity >= 0 && reference.entity < container.bindings.count ? container.bindings[reference.entity] : nil
    }

    /// The temporary identity of an inserted object a delete forgot and the program released
    /// (no registered object has it, no save made it permanent), or nil.
    private func forgottenIdentity(_ reference: UndoReference?) -> Int64? {
        guard let reference, reference.object == nil, reference.raw < 0, permanentIDs[reference.raw] == nil,
              let binding = binding(of: reference), registry[Key(entity: binding.index, raw: reference.raw)] == nil
        else { return nil }
        return reference.raw
    }

    /// Whether the program could change `object` now.
    func isLive(_ object: ManagedObject) -> Bool {
        object.context === self && object._flags.isDisjoint(with: [.deleted, .gone])
    }

    private func set(_ value: UndoValue, slot: Int, of reference: UndoReference) {
        guard let object = resolve(reference), isLive(object) else { return }
        switch value {
        case .stored(let stored):
            setValue(stored, slot: slot, of: object)
        case .target(let targetReference):
            let target = targetReference.flatMap(resolve)
            if target == nil, let forgotten = forgottenIdentity(targetReference) {
                // An insert a delete forgot, released since: named by its identity, as it was.
                setTarget(nil, slot: slot, of: object)
                return setValue(.int(forgotten), slot: slot, of: object)
            }
            guard let target, !isLive(target) else { return setTarget(target, slot: slot, of: object) }
            guard target.context === self || target.context == nil else { return }
            setTarget(nil, slot: slot, of: object)
            // A target deleted since (not saved yet), or an insert a delete forgot: the to-one
            // names it again, as it did (it reads nil until an undo brings the target back). One
            // whose row a save deleted is named by nothing (an undo bringing it back reattaches).
            if !target._flags.contains(.gone) { setValue(.int(target._rawID), slot: slot, of: object) }
        }
    }

    private func relink(_ link: UndoStep.Link, added: Bool) {
        guard let owner = resolve(link.owner), let member = resolve(link.member), isLive(owner), isLive(member),
              let binding = binding(owner) else { return }
        guard memberRaws(slot: link.slot, of: owner).contains(member._rawID) != added else { return }
        self.link(owner, slot: link.slot, member, inverse: binding.inverseSlot[link.slot], added: added)
    }

    /// Takes an object out as the program's delete would (an inserted one is forgotten).
    private func remove(_ reference: UndoReference) {
        guard let object = resolve(reference), isLive(object) else { return }
        try? delete(object, preparing: false)
    }

    /// Brings objects back, then their to-ones (an object's target may be one of the later
    /// ones). Redoing, one whose target a save deleted since, through a relationship that
    /// cascades from the target, goes again: that save's cascade would have taken it. (Undoing,
    /// such a target was inserted by the step itself, and the step's changes set the to-one back.)
    private func restoreAll(_ entries: [(object: UndoReference, values: [UndoValue])], redoing: Bool) {
        for entry in entries { restore(entry.object, values: entry.values) }
        var cascadedSince: [ManagedObject] = []
        // Undeleted ones too: the undo that took an inserted object out cleared the to-ones
        // naming objects it took out with it (`clearToOnes(naming:_:)`).
        for entry in entries {
            guard let object = entry.object.object, isLive(object), let binding = binding(object) else { continue }
            let kinds = object.entitySchema.slotKinds
            for slot in entry.values.indices where slot < kinds.count && kinds[slot] == .toOne {
                guard case .target(let wanted?) = entry.values[slot] else { continue }
                // Gone: its row was deleted (held, or released and not found again), unless it
                // is an insert a delete forgot.
                let found = resolve(wanted)
                let isGone = found.map { $0._flags.contains(.gone) } ?? (forgottenIdentity(wanted) == nil)
                if redoing, isGone, binding.inverseSlot[slot] >= 0,
                   container.bindings[binding.targetEntity[slot]].relationships[binding.inverseSlot[slot]]?.deleteRule
                    == .cascade {
                    cascadedSince.append(object)
                } else if found !== target(slot: slot, of: object) {
                    set(entry.values[slot], slot: slot, of: entry.object)
                }
            }
        }
        for object in cascadedSince where isLive(object) { try? delete(object, preparing: false) }
    }

    /// Brings an object back: a deleted one not saved yet is undeleted; one its delete forgot
    /// (inserted, never saved), or whose row a save deleted, is inserted with `values` (made
    /// again if the program let it go).
    private func restore(_ reference: UndoReference, values: [UndoValue]) {
        // Released, it may still have its row (a rule's target whose save never came): found again.
        let held = resolve(reference)
        if let held, held.context === self, !held._flags.contains(.gone) {
            if held._flags.contains(.deleted) { undelete(held) }
            return
        }
        if let held, held.context != nil && held.context !== self { return }
        guard let binding = binding(of: reference) else { return }
        let object: ManagedObject
        if let held {
            object = held
            if held.context === self {
                // Its row is gone: it comes back as a new object under a new identity.
                registry.removeValue(forKey: key(held, binding))
                held._flags = held._flags.intersection([.observedAccess])
                held._context = nil
                held._rawID = 0
                held._snapshot = []
                held._extras?.faultError = nil
                held._extras?.storeMembers = [:]
            }
        } else {
            object = binding.schema.objectClass.init()
            // A forgotten insert comes back under the temporary identity it had, which to-ones
            // left naming it (see `set(_:slot:of:)`) still name.
            if let forgotten = forgottenIdentity(reference) { object._rawID = forgotten }
        }
        object._values = concreteValues(values, binding)
        insert(object, awaking: false)
        undoRecorder?.bind(reference, to: object)
    }

    /// Puts back a to-one a nullify rule cleared, unless the object has another target now.
    private func reattach(_ cut: UndoStep.Severed) {
        guard let object = resolve(cut.owner), let target = resolve(cut.target), isLive(object), isLive(target),
              self.target(slot: cut.slot, of: object) == nil else { return }
        setTarget(target, slot: cut.slot, of: object)
    }

    private func concreteValues(_ values: [UndoValue], _ binding: EntityBinding) -> [StoredValue] {
        var concrete = binding.schema.initialValues
        for slot in values.indices where slot < concrete.count {
            switch values[slot] {
            case .stored(let stored):
                concrete[slot] = stored
            case .target(let reference):
                // Named as it was, live or not (see `set(_:slot:of:)`), unless its row is gone.
                if let target = reference.flatMap(resolve) {
                    if target.context === self || target.context == nil, !target._flags.contains(.gone) {
                        concrete[slot] = .int(target._rawID)
                    }
                } else if let forgotten = forgottenIdentity(reference) {
                    concrete[slot] = .int(forgotten)
                }
            }
        }
        return concrete
    }

    private func undelete(_ object: ManagedObject) {
        guard let binding = binding(object) else { return }
        let objectKey = key(object, binding)
        deleted.removeValue(forKey: objectKey)
        object._flags.remove(.deleted)
        // It rejoins its to-one targets' to-manys.
        if !object.isFault { touchInversesOfToOnes(object) }
        if hasChangeObservers, pendingChange.deletedObjects.remove(object) == nil {
            pendingChange.insertedObjects.insert(object)
        }
        if !object.changedSlots().isEmpty || object._extras?.changedToMany.isEmpty == false {
            object._flags.insert(.updated)
            updated[objectKey] = object
        }
    }

    /// An object a replay touched: a to-many whose members are the store's again is no change,
    /// and an object with nothing left to save (its values and members the store's) leaves the
    /// changed set — an undo back to the saved state leaves nothing to save.
    private func settleChanges(of object: ManagedObject) {
        guard object._flags.contains(.updated), let binding = binding(object) else { return }
        if let extras = object._extras {
            for slot in extras.changedToMany.sorted()
            where Set(memberRaws(slot: slot, of: object)) == Set(storeMemberRaws(slot: slot, of: object)) {
                extras.changedToMany.remove(slot)
            }
        }
        guard object.changedSlots().isEmpty, object._extras?.changedToMany.isEmpty != false else { return }
        object._flags.remove(.updated)
        updated.removeValue(forKey: key(object, binding))
    }
}
