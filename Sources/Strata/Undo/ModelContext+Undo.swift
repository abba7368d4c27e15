import StrataRecords

// Undo and redo (``UndoStack``). The context tells its stack each change as it makes it (a
// value's old value, an insert, a delete with the values to restore, a many-to-many link); the
// open event closes into a step at `processPendingChanges`, a save, an undo or a redo. Undo and
// redo change objects through the same setters, inserts and deletes as the program does, so
// change tracking, inverses and observers need nothing of their own.

extension ModelContext {
    /// The context's undo stack; `nil` (the default) records nothing. Giving a stack to a
    /// context takes it from the context it recorded before and forgets its steps (they name
    /// that context's objects).
    public var undoStack: UndoStack? {
        get { undoRecorder }
        set {
            if undoRecorder === newValue { return }
            undoRecorder?.context = nil
            if let newValue {
                if let previous = newValue.context, previous !== self { previous.undoRecorder = nil }
                newValue.removeAllActions()
                newValue.context = self
            }
            undoRecorder = newValue
        }
    }

    /// Takes back the last step of ``undoStack``: the open event's changes if there are any
    /// (open groups are closed first), else the last closed step. Objects the step inserted
    /// leave the context, objects it deleted come back (inserted again if a save deleted their
    /// rows), values and relationships take their earlier values. Does nothing without a stack
    /// or a step.
    public func undo() {
        replay(undoing: true)
    }

    /// Makes again the last step ``undo()`` took back. Does nothing without one; a change made
    /// after the undo forgets it.
    public func redo() {
        replay(undoing: false)
    }

    /// Moves the last step from one stack to the other, applying it.
    private func replay(undoing: Bool) {
        guard let stack = undoRecorder else { return }
        stack.groupingLevel = 0
        closeUndoStep()
        guard let step = undoing ? stack.undoSteps.popLast() : stack.redoSteps.popLast() else { return }
        if undoing { stack.isUndoing = true } else { stack.isRedoing = true }
        apply(step, undoing: undoing)
        stack.isUndoing = false
        stack.isRedoing = false
        if undoing { stack.redoSteps.append(step) } else { stack.undoSteps.append(step) }
    }

    // MARK: Recording

    /// Records a delete: the object's values, and what the store's delete rules will do at
    /// the save (the objects a cascade reaches, with their values; the relationships a nullify
    /// breaks), so an undo after that save puts them back. Walks what the rules reach, as the
    /// save will.
    func recordDeleteForUndo(_ object: ManagedObject, _ stack: UndoStack) {
        if stack.recording.forgetInsert(of: object) { return }
        var reached = Set<ObjectIdentifier>()
        recordDeletion(of: object, byRule: false, in: stack, reached: &reached)
    }

    private func recordDeletion(of object: ManagedObject, byRule: Bool, in stack: UndoStack,
                                reached: inout Set<ObjectIdentifier>) {
        guard reached.insert(ObjectIdentifier(object)).inserted else { return }
        object._prepareValues()
        if object._flags.contains(.inserted) { stack.forgotten[object._rawID] = reference(object, stack) }
        stack.recording.deleted.append((object, object._values, byRule))
        guard let binding = binding(object) else { return }
        for slot in binding.relationships.indices {
            guard let relationship = binding.relationships[slot], binding.targetEntity[slot] >= 0,
                  relationship.deleteRule != .deny else { continue }
            let inverse = binding.inverseSlot[slot]
            let targetKinds = container.bindings[binding.targetEntity[slot]].schema.slotKinds
            let reachedObjects = relationship.isToMany ? members(slot: slot, of: object)
                : target(slot: slot, of: object).map { [$0] } ?? []
            for target in reachedObjects where isLive(target) {
                if relationship.deleteRule == .cascade {
                    // An inserted object's cascade runs in the context: deletes of their own.
                    if !object._flags.contains(.inserted) {
                        recordDeletion(of: target, byRule: true, in: stack, reached: &reached)
                    }
                } else if relationship.isManyToMany {
                    stack.recording.severedLinks.append((object, slot, target))
                } else if inverse >= 0, targetKinds[inverse] == .toOne, !object._flags.contains(.inserted) {
                    // The save will clear the target's to-one naming `object`: its value now is
                    // what an undo restores (unless the event changed it before). An inserted
                    // object's delete clears such to-ones itself, as changes.
                    target._prepareValues()
                    guard inverse < target._values.count else { continue }
                    stack.recording.willChange(target, slot: inverse)
                    stack.recording.severedToOnes.append((target, inverse, object))
                }
            }
        }
    }

    /// Ends the open event's step, unless a group is open.
    func closeUndoStep() {
        guard let stack = undoRecorder, stack.groupingLevel == 0 else { return }
        let recording = stack.recording
        stack.recording = UndoRecording()
        guard !recording.isEmpty else { return }
        let step = makeStep(recording, stack)
        if !step.isEmpty { stack.push(step) }
    }

    /// Whether the open event's step would change something (a value set and set back, a link
    /// made and broken, an object inserted and deleted are none).
    func openEventHasChanges(_ stack: UndoStack) -> Bool {
        let recording = stack.recording
        if !recording.deleted.isEmpty || !recording.netLinks().isEmpty { return true }
        if recording.inserted.contains(where: { $0.context === self && !$0.isDeleted }) { return true }
        return recording.touched.values.contains { touched in
            touched.object.context === self && touched.order.contains { slot in
                slot < touched.object._values.count && touched.before[slot]?.isIdentical(to: touched.object._values[slot]) == false
            }
        }
    }

    private func makeStep(_ recording: UndoRecording, _ stack: UndoStack) -> UndoStep {
        var step = UndoStep(name: recording.name)
        // Objects the event inserted: those still there (saved or not: a save inside a group
        // leaves them in the group's step); one a rule deleted at such a save came and went.
        let insertedHere = Set(recording.inserted.map(ObjectIdentifier.init))
        for object in recording.inserted where object.context === self && !object.isDeleted {
            step.inserted.append((reference(object, stack), undoValues(object._values, of: object, stack)))
        }
        // A deleted object's values as its delete (or its rule) found them: a save in the group
        // may have turned it into a fault since.
        var deletedValues: [ObjectIdentifier: [StoredValue]] = [:]
        for entry in recording.deleted where !insertedHere.contains(ObjectIdentifier(entry.object)) {
            deletedValues[ObjectIdentifier(entry.object)] = entry.values
            step.deleted.append((reference(entry.object, stack), undoValues(entry.values, of: entry.object, stack),
                                 entry.byRule))
        }
        for cut in recording.severedToOnes {
            step.severedToOnes.append(UndoStep.Link(owner: reference(cut.owner, stack), slot: cut.slot,
                                                    member: reference(cut.member, stack), added: true))
        }
        // Such a to-one's value is set after it is put back, even when the event ended where
        // it began (the save may clear it after the event closed, or the event set it first).
        let severed = Set(recording.severedToOnes.map { SeveredSlot(object: ObjectIdentifier($0.owner), slot: $0.slot) })
        for cut in recording.severedLinks {
            step.severedLinks.append(UndoStep.Link(owner: reference(cut.owner, stack), slot: cut.slot,
                                                   member: reference(cut.member, stack), added: true))
        }
        for id in recording.touchOrder where !insertedHere.contains(id) {
            guard let touched = recording.touched[id] else { continue }
            let object = touched.object
            // An object another change took out of the context (refreshed, reset) has nothing here.
            let deletedAs = deletedValues[id]
            guard object.context === self || deletedAs != nil else { continue }
            // A rule's target can change after its delete was recorded, until a save deletes it.
            let values = object._flags.contains(.gone) || object.context !== self ? deletedAs ?? object._values
                : object._values
            let kinds = object.entitySchema.slotKinds
            for slot in touched.order where slot < values.count && kinds[slot] != .derived {
                guard let before = touched.before[slot], !before.isIdentical(to: values[slot])
                    || severed.contains(SeveredSlot(object: id, slot: slot)) else { continue }
                step.changes.append(UndoStep.Change(object: reference(object, stack), slot: slot,
                                                    before: undoValue(before, slot: slot, of: object, stack),
                                                    after: undoValue(values[slot], slot: slot, of: object, stack)))
            }
        }
        for link in recording.netLinks() {
            step.links.append(UndoStep.Link(owner: reference(link.owner, stack), slot: link.slot,
                                            member: reference(link.member, stack), added: link.added))
        }
        return step
    }

    private func reference(_ object: ManagedObject, _ stack: UndoStack) -> UndoReference {
        stack.reference(to: object, entity: binding(object)?.index ?? -1)
    }

    private func undoValues(_ values: [StoredValue], of object: ManagedObject, _ stack: UndoStack) -> [UndoValue] {
        values.indices.map { undoValue(values[$0], slot: $0, of: object, stack) }
    }

    private func undoValue(_ value: StoredValue, slot: Int, of object: ManagedObject, _ stack: UndoStack) -> UndoValue {
        guard object.entitySchema.slotKinds[slot] == .toOne else { return .stored(value) }
        guard case .int(let raw) = value else { return .target(nil) }
        if let registered = registeredObject(raw: raw, slot: slot, of: object) { return .target(reference(registered, stack)) }
        // A temporary identity no registered object has: an insert a delete forgot.
        if raw < 0 { return .target(stack.forgotten[raw]) }
        return .target(self.object(raw: raw, slot: slot, of: object).map { reference($0, stack) })
    }

    // MARK: Undoing and redoing

    private func apply(_ step: UndoStep, undoing: Bool) {
        // One change for observers: each property heard once, with its final value.
        changeBatch.depth += 1
        if undoing {
            restore(step.deleted.map { ($0.object, $0.values) })
            for cut in step.severedLinks.reversed() { relink(cut, added: true) }
            for cut in step.severedToOnes.reversed() { reattach(cut) }
            for change in step.changes.reversed() { set(change.before, slot: change.slot, of: change.object) }
            for link in step.links.reversed() { relink(link, added: !link.added) }
            for entry in step.inserted.reversed() { remove(entry.object) }
        } else {
            restore(step.inserted)
            for link in step.links { relink(link, added: link.added) }
            for change in step.changes { set(change.after, slot: change.slot, of: change.object) }
            // What the rules reached, the save's rules reach again.
            for entry in step.deleted where !entry.byRule { remove(entry.object) }
        }
        changeBatch.end()
        for change in step.changes { forgetUnchangedUpdate(change.object.object) }
        postObjectsDidChange()
    }

    /// The object a reference names: the one it holds, else the registered object (or a fault)
    /// of its identity; nil for an object released while it had only a temporary identity.
    private func resolve(_ reference: UndoReference) -> ManagedObject? {
        if let object = reference.object { return object }
        guard reference.entity >= 0, reference.entity < container.bindings.count else { return nil }
        let raw = reference.raw < 0 ? (permanentIDs[reference.raw] ?? reference.raw) : reference.raw
        guard raw > 0 else { return nil }
        let binding = container.bindings[reference.entity]
        let wasRegistered = registry[Key(entity: binding.index, raw: raw)] != nil
        let found = object(raw: raw, binding: binding)
        if !wasRegistered {
            // A fault made here must name a row: one a save deleted names nothing to change.
            found._prepareValues()
            if found._extras?.faultError != nil { return nil }
        }
        reference.object = found
        reference.raw = raw
        return found
    }

    /// Whether the program could change `object` now.
    private func isLive(_ object: ManagedObject) -> Bool {
        object.context === self && object._flags.isDisjoint(with: [.deleted, .gone])
    }

    private func set(_ value: UndoValue, slot: Int, of reference: UndoReference) {
        guard let object = resolve(reference), isLive(object) else { return }
        switch value {
        case .stored(let stored):
            setValue(stored, slot: slot, of: object)
        case .target(let targetReference):
            let target = targetReference.flatMap(resolve)
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
        if object._flags.contains(.inserted), let stack = undoRecorder { stack.forgotten[object._rawID] = reference }
        try? delete(object)
    }

    /// Brings objects back, then their to-ones (an object's target may be one of the later
    /// ones). One whose target a save deleted since, through a relationship that cascades from
    /// the target, goes again: that save's cascade would have taken it.
    private func restore(_ entries: [(object: UndoReference, values: [UndoValue])]) {
        let insertedAgain = entries.filter { restore($0.object, values: $0.values) }
        var cascadedSince: [ManagedObject] = []
        for entry in insertedAgain {
            guard let object = entry.object.object, let binding = binding(object) else { continue }
            let kinds = object.entitySchema.slotKinds
            for slot in entry.values.indices where slot < kinds.count && kinds[slot] == .toOne {
                guard case .target(let wanted?) = entry.values[slot] else { continue }
                if let gone = wanted.object, gone._flags.contains(.gone), binding.inverseSlot[slot] >= 0,
                   container.bindings[binding.targetEntity[slot]].relationships[binding.inverseSlot[slot]]?.deleteRule
                    == .cascade {
                    cascadedSince.append(object)
                } else if wanted.object !== target(slot: slot, of: object) {
                    set(entry.values[slot], slot: slot, of: entry.object)
                }
            }
        }
        for object in cascadedSince where isLive(object) { try? delete(object) }
    }

    /// Brings an object back: a deleted one not saved yet is undeleted; one its delete forgot
    /// (inserted, never saved), or whose row a save deleted, is inserted with `values` (made
    /// again if the program let it go). Whether it was inserted.
    private func restore(_ reference: UndoReference, values: [UndoValue]) -> Bool {
        let held = reference.object
        if let held, held.context === self, !held._flags.contains(.gone) {
            if held._flags.contains(.deleted) { undelete(held) }
            return false
        }
        if let held, held.context != nil && held.context !== self { return false }
        guard reference.entity >= 0, reference.entity < container.bindings.count else { return false }
        let binding = container.bindings[reference.entity]
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
        }
        object._values = concreteValues(values, binding)
        insert(object, awaking: false)
        reference.object = object
        reference.raw = object._rawID
        return true
    }

    /// Puts back a to-one a nullify rule cleared, unless the object has another target now.
    private func reattach(_ cut: UndoStep.Link) {
        guard let object = resolve(cut.owner), let target = resolve(cut.member), isLive(object), isLive(target),
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
                if let target = reference.flatMap(resolve), target.context === self || target.context == nil,
                   !target._flags.contains(.gone) {
                    concrete[slot] = .int(target._rawID)
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

    /// An object an undo put back to its saved values has nothing left to save.
    private func forgetUnchangedUpdate(_ object: ManagedObject?) {
        guard let object, object._flags.contains(.updated), object.changedSlots().isEmpty,
              object._extras?.changedToMany.isEmpty != false, let binding = binding(object) else { return }
        object._flags.remove(.updated)
        updated.removeValue(forKey: key(object, binding))
    }
}
