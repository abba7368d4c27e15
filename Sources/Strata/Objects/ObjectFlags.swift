/// An object's state bits.
struct ObjectFlags: OptionSet {
    let rawValue: UInt16
    /// Values not loaded; the first access to a persistent property loads them.
    static let fault = ObjectFlags(rawValue: 1 << 0)
    /// Inserted in its context, not saved yet.
    static let inserted = ObjectFlags(rawValue: 1 << 1)
    /// Deleted in its context, not saved yet.
    static let deleted = ObjectFlags(rawValue: 1 << 2)
    /// Has unsaved changes of its own properties (or relationships).
    static let updated = ObjectFlags(rawValue: 1 << 3)
    /// In its context's registry.
    static let registered = ObjectFlags(rawValue: 1 << 4)
    /// The prototype a schema build reads relationship inverses on.
    static let probe = ObjectFlags(rawValue: 1 << 5)
    /// Deleted by a save: no longer in the store.
    static let gone = ObjectFlags(rawValue: 1 << 6)
    /// Inside a lifecycle hook the context runs (awake, willSave, …): changes are not events.
    static let inHook = ObjectFlags(rawValue: 1 << 7)
    /// Swift Observation was told of a read of one of its properties (never cleared): only
    /// then can a tracking closure or an `Observations` sequence be waiting on this object, so
    /// only then does a change tell the registrar (decision 55).
    static let observedAccess = ObjectFlags(rawValue: 1 << 8)
    /// Written by the save now finishing (set and cleared within `finishSave`): how that
    /// save's `apply` tells its own rows from others' in the object it already loads, where a
    /// table by address cost a random memory access per saved object (decision 73).
    static let savedHere = ObjectFlags(rawValue: 1 << 9)
    /// The first slots changed in the current event (``ManagedObject/changedValuesForCurrentEvent()``),
    /// one bit each in the flags' spare bits: a change of one of them allocates no
    /// ``ObjectExtras`` (an allocation and its release for every object an insert or an update
    /// changes; decision 57). Later slots are kept in `ObjectExtras.eventChanges`. Six, not
    /// more: the flags stay two bytes, so a subclass's first six one-byte wrappers pack into the
    /// object's last word (an object of up to six properties is an 80-byte block: four bytes
    /// more made a five-property object a 96-byte one, larger and slower to fetch; decisions 57
    /// and 73).
    static let eventSlotCount = 6
    static let eventSlotShift = 10
    static let eventSlots = ObjectFlags(rawValue: UInt16((1 << eventSlotCount) - 1) << UInt16(eventSlotShift))
    static func eventSlot(_ slot: Int) -> ObjectFlags {
        ObjectFlags(rawValue: UInt16(1) << UInt16(eventSlotShift + slot))
    }
}
