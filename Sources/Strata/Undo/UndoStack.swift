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
/// What the store computes at a save is not a step of its own: derived values follow the
/// restored values at the next save, and objects a delete rule cascaded to or nullified *in the
/// store* stay as the save left them (undo before the save, and nothing of them changed).
///
/// Steps hold objects weakly (and their identities, to find them again as faults, or values to
/// make them again), so a context dropped with its undo stack is freed.
public final class UndoStack {
    /// How many steps ``ModelContext/undo()`` can take back; older steps are forgotten. `0`
    /// (the default) keeps every step, as Core Data's `levelsOfUndo`.
    public var levels: Int {
        didSet { trim() }
    }
    /// Whether ``ModelContext/undo()`` is changing the context (a key observer or a hook can
    /// tell its changes from the program's).
    public internal(set) var isUndoing = false
    /// Whether ``ModelContext/redo()`` is changing the context.
    public internal(set) var isRedoing = false
    /// How many ``beginGrouping()`` calls have no ``endGrouping()`` yet.
    public internal(set) var groupingLevel = 0

    /// The context the stack records (one at a time).
    weak var context: ModelContext?
    /// The changes of the open event.
    var recording = UndoRecording()
    var undoSteps: [UndoStep] = []
    var redoSteps: [UndoStep] = []
    /// One reference per object the steps name, so a new identity (an object inserted again)
    /// reaches every step.
    var references: [ObjectIdentifier: UndoReference] = [:]
    /// Inserted objects a delete forgot, by their temporary identities: a to-one still naming
    /// one names nothing the context can find, but a step must restore it to that object.
    var forgotten: [Int64: UndoReference] = [:]

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
        forgotten = [:]
        groupingLevel = 0
    }

    /// Whether changes are recorded now (not while a step is undone or made again).
    var isRecording: Bool { !isUndoing && !isRedoing }

    /// Adds a closed step: a new change forgets what could be redone.
    func push(_ step: UndoStep) {
        undoSteps.append(step)
        redoSteps = []
        trim()
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
        let made = UndoReference(object, entity: entity)
        references[id] = made
        return made
    }

    /// Drops references whose objects were released (their steps keep them by identity).
    private func forgetReleasedReferences() {
        references = references.filter { $0.value.object != nil }
        forgotten = forgotten.filter { $0.value.object != nil }
    }
}
