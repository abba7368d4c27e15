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
}
