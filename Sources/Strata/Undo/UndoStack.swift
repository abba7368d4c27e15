/// Undo and redo for one ``ModelContext``: Core Data's and SwiftData's undo manager.
///
/// Off until a context is given one (``ModelContext/undoStack``). Then every event of the
/// context — the changes between two ``ModelContext/processPendingChanges()`` calls, a save, an
/// undo or a redo, or everything between ``beginGrouping()`` and its ``endGrouping()`` — is one
/// step: attribute values, to-one and many-to-many relationships, inserts and deletes.
/// ``ModelContext/undo()`` takes the last step back (closing the open event first) and
/// ``ModelContext/redo()`` makes it again; both change objects as setters would, so key
/// observers, Swift Observation and objects-did-change hear them. A save keeps the steps (an undo
/// after a save is a change the next save writes); ``ModelContext/rollback()`` and
/// ``ModelContext/reset()`` drop them, and so does a new change for the redo steps.
///
/// What the store does at a save belongs to the step of what it saves: undoing a delete a save
/// carried out brings back the objects its cascade rules deleted and the to-ones and links its
/// nullify rules cleared (each delete records them); derived values follow at the next save.
///
/// Steps hold objects weakly (and their identities, to find them again as faults, or values to
/// make them again), so a context dropped with its undo stack is freed. The open event holds
/// the objects it changed, as the context holds its unsaved changes, until it closes.
public final class UndoStack {
    /// How many steps ``ModelContext/undo()`` can take back; older steps are forgotten. `0`
    /// (the default) keeps every step, as Core Data's `levelsOfUndo`.
    public var levels: Int {
        didSet {
            if levels < 0 { levels = 0 }
            trim()
        }
    }
    /// Whether ``ModelContext/undo()`` is changing the context (a key observer or a hook can
    /// tell its changes from the program's).
    public internal(set) var isUndoing = false
    /// Whether ``ModelContext/redo()`` is changing the context.
    public internal(set) var isRedoing = false
    /// How many ``beginGrouping()`` calls have no ``endGrouping()`` yet.
    public internal(set) var groupingLevel = 0
    /// How many ``disableRecording()`` calls have no ``enableRecording()`` yet.
    private var pauses = 0
    /// Steps pushed since references were last pruned.
    private var pushesSincePrune = 0

    /// The context the stack records (one at a time).
    weak var context: ModelContext?
    /// The changes of the open event.
    var recording = UndoRecording()
    var undoSteps: [UndoStep] = []
    var redoSteps: [UndoStep] = []
    /// One reference per object the steps name, by the object (while it lives) and by its
    /// current identity (kept current: a save's primary keys, an object inserted again): an
    /// object released and fetched again, or made again, is the same reference in every step.
    var references: [ObjectIdentifier: UndoReference] = [:]
    var identities: [Identity: UndoReference] = [:]

    /// An object's identity: its entity's index and its raw identifier (a primary key once saved).
    struct Identity: Hashable {
        var entity: Int
        var raw: Int64
    }

    /// An empty stack keeping `levels` steps (`0`: all).
    public init(levels: Int = 0) {
        self.levels = max(0, levels)
    }

    /// Whether ``ModelContext/undo()`` would change something: a step, or changes of the open
    /// event.
    public var canUndo: Bool { !undoSteps.isEmpty || context?.openEventHasChanges(self) == true }

    /// Whether ``ModelContext/redo()`` would change something: a step undone, and no change
    /// since (a change forgets what could be redone).
    public var canRedo: Bool { !redoSteps.isEmpty && context?.openEventHasChanges(self) != true }

    /// The name ``setActionName(_:)`` gave the step ``ModelContext/undo()`` would take back
    /// (empty when unnamed), for an "Undo …" menu item.
    public var undoActionName: String {
        (context?.openEventHasChanges(self) == true ? recording.name : undoSteps.last?.name) ?? ""
    }

    /// The name of the step ``ModelContext/redo()`` would make again (empty when unnamed).
    public var redoActionName: String { redoSteps.last?.name ?? "" }

    /// Names the open event's step ("Rename", "Delete Items"): ``undoActionName`` and
    /// ``redoActionName`` give it back.
    public func setActionName(_ name: String) {
        recording.name = name
    }

    /// Opens a group: every change until the matching ``endGrouping()`` is one step, whatever
    /// ``ModelContext/processPendingChanges()`` calls come between. Groups nest; only the
    /// outermost one ends the step.
    public func beginGrouping() {
        if groupingLevel == 0 { context?.closeUndoStep() }
        groupingLevel += 1
    }

    /// Closes the group ``beginGrouping()`` opened; the outermost one ends the step. An
    /// `endGrouping()` without a group does nothing.
    public func endGrouping() {
        guard groupingLevel > 0 else { return }
        groupingLevel -= 1
        if groupingLevel == 0 { context?.closeUndoStep() }
    }

    /// Forgets every step, the open event's changes included.
    public func removeAllActions() {
        recording = UndoRecording()
        undoSteps = []
        redoSteps = []
        references = [:]
        identities = [:]
        groupingLevel = 0
    }

    /// Stops recording the context's changes (an import, a change the program does not want the
    /// user to undo) until the matching ``enableRecording()``; calls nest. Steps recorded
    /// before stay; an undo of them later sets their values back over what changed meanwhile.
    public func disableRecording() {
        pauses += 1
    }

    /// Records again after ``disableRecording()``; without a pause it does nothing.
    public func enableRecording() {
        if pauses > 0 { pauses -= 1 }
    }

    /// Whether the context's changes are recorded now: not while paused, nor while a step is
    /// undone or made again.
    public var isRecording: Bool { pauses == 0 && !isUndoing && !isRedoing }

    /// Adds a closed step: a new change forgets what could be redone.
    func push(_ step: UndoStep) {
        undoSteps.append(step)
        redoSteps = []
        trim()
        // Released objects' references would pile up over a long session with unbounded levels.
        pushesSincePrune += 1
        if pushesSincePrune >= 256 { forgetReleasedReferences() }
    }

    private func trim() {
        guard levels > 0, undoSteps.count > levels else { return }
        undoSteps.removeFirst(undoSteps.count - levels)
        forgetReleasedReferences()
    }

    /// The reference the steps use for `object`, made on first use.
    func reference(to object: ManagedObject, entity: Int) -> UndoReference {
        let id = ObjectIdentifier(object)
        // A reference whose object is gone may carry a reused address: not this object's.
        if let known = references[id], known.object === object { return known }
        let identity = Identity(entity: entity, raw: object._rawID)
        if object._rawID != 0, let known = identities[identity], known.object == nil || known.object === object {
            // The same stored (or forgotten) object, met again as another Swift object.
            known.object = object
            references[id] = known
            return known
        }
        let made = UndoReference(object, entity: entity)
        references[id] = made
        if object._rawID != 0 { identities[identity] = made }
        return made
    }

    /// The reference of the object with identity `raw` of `entity`, if a step names it.
    func reference(entity: Int, raw: Int64) -> UndoReference? {
        identities[Identity(entity: entity, raw: raw)]
    }

    /// `reference` names `object` from now on (found again after a release, or inserted again
    /// under a new identity): the one reference of that object, by the object and by its identity.
    func bind(_ reference: UndoReference, to object: ManagedObject) {
        reference.object = object
        references[ObjectIdentifier(object)] = reference
        renameIdentity(entity: reference.entity, from: reference.raw, to: object._rawID)
        reference.raw = object._rawID
    }

    /// An object's identity changed (a save gave it its primary key; an undo inserted it again):
    /// its reference follows.
    func renameIdentity(entity: Int, from old: Int64, to new: Int64) {
        guard old != new, let reference = identities.removeValue(forKey: Identity(entity: entity, raw: old)) else {
            return
        }
        reference.raw = new
        identities[Identity(entity: entity, raw: new)] = reference
    }

    /// Drops references whose objects were released (their steps keep them by identity).
    private func forgetReleasedReferences() {
        pushesSincePrune = 0
        references = references.filter { $0.value.object != nil }
    }
}
