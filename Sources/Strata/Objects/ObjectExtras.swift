import StrataRecords

/// State most objects never need, kept out of the object itself.
final class ObjectExtras {
    /// Relationships of an object not yet in a context: to-one targets and to-many members by slot.
    var detachedToOne: [Int: ManagedObject] = [:]
    var detachedToMany: [Int: [ManagedObject]] = [:]
    /// Why the last fault fulfilment failed (the row is gone, an I/O error).
    /// Setter failures of an object in no context (a value that cannot be encoded): the
    /// context it is inserted into takes them, and its next save throws them.
    var pendingMisuse: [StrataError] = []
    var faultError: StrataError?
    /// Slots changed since the last `processPendingChanges` (changedValuesForCurrentEvent),
    /// from `ObjectFlags.eventSlotCount` on (the first ones are flag bits: use
    /// ``ManagedObject/noteEventChange(slot:)`` and ``ManagedObject/eventChangedSlots``).
    /// Unchecked for exclusivity at run time, as the object's own fields are: a setter and a
    /// save touch it per changed object, with plain loads and stores.
    @exclusivity(unchecked) var eventChanges: SlotSet = []
    /// To-many slots changed through the other side (or links), since the last save: bits, as
    /// every item an insert relates to its list marks the list's to-many again (a `Set<Int>`
    /// hashed the slot with SipHash each time).
    @exclusivity(unchecked) var changedToMany: SlotSet = []
    /// What reads of a probe prototype record (key-path resolution).
    var probe: ProbeRecorder?
    /// To-many members read from the store, by slot (``ModelContext/storeMemberRaws(slot:of:)``).
    var storeMembers: [Int: StoreMembers] = [:]
    /// Values of cached computed properties, by name.
    var cache: [String: Any] = [:]
    /// Computed properties whose dependencies changed since the last `processPendingChanges`.
    @exclusivity(unchecked) var computedEvents: Set<String> = []
    /// Property observers (``ModelObject/observe(_:options:changeHandler:)``).
    var observers: [KeyObserver] = []

    /// Ends the current event: ``ManagedObject/changedValuesForCurrentEvent()`` is empty again.
    func clearEvents() {
        eventChanges = []
        computedEvents = []
    }
}
