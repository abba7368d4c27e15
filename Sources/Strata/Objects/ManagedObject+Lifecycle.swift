extension ManagedObject {
    /// Whether the object has unsaved changes of its own (not inserted, not deleted). Never
    /// fires a fault.
    public final var isUpdated: Bool { _flags.contains(.updated) }
    /// Whether the object was inserted in its context and not saved yet. Never fires a fault.
    public final var isInserted: Bool { _flags.contains(.inserted) }
    /// Whether the object is deleted in its context (not saved yet), or was deleted by a save
    /// (then it is a fault whose row is gone: see ``willTurnIntoFault()``). Never fires a fault.
    public final var isDeleted: Bool { _flags.contains(.deleted) || _flags.contains(.gone) }
    /// Whether the object's values are not loaded. Never fires a fault.
    public final var isFault: Bool { _flags.contains(.fault) }
    /// 0 when the object's values are loaded, 1 while it is a fault (Core Data's numbering).
    /// Never fires a fault.
    public final var faultingState: Int { isFault ? 1 : 0 }
    /// Whether the object is inserted, deleted or updated. Never fires a fault.
    public final var hasChanges: Bool { !_flags.isDisjoint(with: [.inserted, .deleted, .updated]) }
}
