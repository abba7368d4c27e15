import StrataRecords

// Recording for undo: the context tells its stack each change as it makes it, and the open event
// closes into an ``UndoStep`` of deltas (decision 66).

extension ModelContext {
    /// The undo stack when it records the context's changes now (not while it replays a step,
    /// nor while paused): what each change path tells.
    @inline(__always)
    var recordingUndo: UndoStack? {
        guard let stack = undoRecorder, stack.isRecording else { return nil }
        return stack
    }

    /// Records a delete: the object's values, and what the store's delete rules will do at
    /// the save (the objects a cascade reaches, with their values; the relationships a nullify
    /// breaks), so an undo after that save puts them back. Walks what the rules reach, as the
    /// save will.
    func recordDeleteForUndo(_ object: ManagedObject, _ stack: UndoStack) {
        // Inserted in this event and not saved since: it leaves no trace. (Saved in the event —
        // a save inside a group — its delete is real, and so are what its rules reach.)
        if object._flags.contains(.inserted), stack.recording.forgetInsert(of: object) { return }
        var reached = Set<ObjectIdentifier>()
        recordDeletion(of: object, byRule: false, in: stack, reached: &reached)
    }

    private func recordDeletion(of object: ManagedObject, byRule: Bool, in stack: UndoStack,
                                reached: inout Set<ObjectIdentifier>) {
        guard reached.insert(ObjectIdentifier(object)).inserted else { return }
        object._prepareValues()
        // A forgotten insert is found by its temporary identity (`undoValue`): make its reference now.
        if object._flags.contains(.inserted) { _ = reference(object, stack) }
        stack.recording.deleted.append((object, object._values, byRule))
        guard let binding = binding(object) else { return }
        for slot in binding.relationships.indices {
            guard let relationship = binding.relationships[slot], binding.targetEntity[slot] >= 0,
                  relationship.deleteRule != .deny else { continue }
            let inverse = binding.inverseSlot[slot]
            let targetKinds = container.bindings[binding.targetEntity[slot]].schema.slotKinds
            for target in self.reached(slot: slot, of: object, isToMany: relationship.isToMany) where isLive(target) {
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
    /// made and broken, an object inserted and deleted are none): the step it would close into,
    /// built and dropped, so the answer is exactly what closing it would push.
    func openEventHasChanges(_ stack: UndoStack) -> Bool {
        !stack.recording.isEmpty && !makeStep(stack.recording, stack).isEmpty
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
            step.severedToOnes.append(UndoStep.Severed(owner: reference(cut.owner, stack), slot: cut.slot,
                                                       target: reference(cut.target, stack)))
        }
        // Such a to-one's value is set after it is put back, even when the event ended where
        // it began (the save may clear it after the event closed, or the event set it first).
        let severed = Set(recording.severedToOnes.map {
            UndoRecording.Slot(object: ObjectIdentifier($0.owner), slot: $0.slot)
        })
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
                    || severed.contains(UndoRecording.Slot(object: id, slot: slot)) else { continue }
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
        if let registered = registeredObject(raw: raw, slot: slot, of: object) {
            return .target(reference(registered, stack))
        }
        // A temporary identity no registered object has: an insert a delete forgot.
        if raw < 0 {
            guard let binding = binding(object), binding.targetEntity[slot] >= 0 else { return .target(nil) }
            return .target(stack.reference(entity: binding.targetEntity[slot], raw: raw))
        }
        return .target(self.object(raw: raw, slot: slot, of: object).map { reference($0, stack) })
    }
}
