import StrataRecords

/// The base class of model classes: an object whose persistent properties (declared with
/// ``Attribute``, ``Relationship`` and ``Derived``) live in a store, managed by a
/// ``ModelContext``: faulting, uniquing, change tracking, snapshots and lifecycle hooks, on
/// the contract of Core Data's `NSManagedObject`.
///
/// ```swift
/// final class TodoList: ManagedObject {
///     @Attribute var name: String
///     @Relationship(deleteRule: .cascade, inverse: \Item.list) var items: Set<Item>
///     @Derived("items.@count") var itemCount: Int64
///
///     convenience init(name: String) {
///         self.init()
///         self.name = name
///     }
/// }
/// ```
///
/// A class needs `init()` (inherited, or `required init() { super.init() }` when it declares a
/// designated initializer): contexts make faults with it, and the class's schema is read from an
/// object it makes, so it must not read or set persistent properties (a container refuses such
/// a class with `StrataError.invalidModel`). Objects made by the program belong to
/// no context until ``ModelContext/insert(_:)`` (or until related to an object that does).
///
/// Not `Sendable`: an object stays in its context's isolation domain; send its ``objectID``.
///
/// Equality and hashing are identity (never fire a fault), so objects go in sets freely.
open class ManagedObject: Hashable, CustomStringConvertible {
    // Layout matters: a registered, unchanged fault must stay small (at most 128 bytes with
    // its registration), so rarely used state lives in `extras`, allocated on demand.
    // The flags come last: a subclass's one-byte wrappers then pack into the same 8 bytes
    // (Swift lays fields out in order), which keeps an object with up to six properties in an
    // 80-byte allocation rather than 96.
    //
    // Exclusivity is not checked at run time on these fields (decision 48): every read of a
    // property paid one to three `swift_beginAccess` calls, a real share of a fetch that reads
    // every object. Every mutation of them is a plain store or a mutation of a value that runs
    // no other code (no user hook, no call back into the object) while the access lasts, so no
    // two accesses can overlap; keep it so.
    /// Unretained: schemas are never freed (``EntitySchema`` keeps every one it builds), and a
    /// counted reference cost a retain and a release on every property access. `Unmanaged`
    /// rather than `unowned(unsafe)`: a load of the latter is still a strong copy (a retain and
    /// a release around its use), while ``_trackAccess(slot:)`` borrows it.
    @exclusivity(unchecked) final var _schemaRef: Unmanaged<EntitySchema>?
    /// Strong: an object keeps its context alive, so a fault can always fire and a change is
    /// never lost to a released context. No cycle for unchanged objects (the context holds
    /// them unowned); a changed one and its context keep each other until save or rollback.
    @exclusivity(unchecked) final var _context: ModelContext?
    /// Positive: primary key; negative: temporary identifier; 0: not given one yet.
    @exclusivity(unchecked) final var _rawID: Int64 = 0
    /// Current values by slot (empty while a fault).
    @exclusivity(unchecked) final var _values: [StoredValue] = []
    /// The values last read from or saved to the store, by slot (empty: none).
    @exclusivity(unchecked) final var _snapshot: [StoredValue] = []
    @exclusivity(unchecked) final var _extras: ObjectExtras?
    @exclusivity(unchecked) final var _flags: ObjectFlags = []

    /// Makes an object that belongs to no context yet (contexts also make their faults with it).
    /// Put initial values in a convenience initializer or ``awakeFromInsert()``.
    public required init() {}

    deinit {
        // Borrowed: the object's own field holds the context for the whole call (nothing can
        // clear it while the object is freed), so the call needs no retain and release of its own.
        if _flags.contains(.registered), let context = _context.map(Unmanaged.passUnretained) {
            context._withUnsafeGuaranteedRef { $0.objectDidDeallocate(self) }
        }
    }

    // MARK: Lifecycle hooks (override; each runs in the context's isolation domain, none may
    // fetch or save)

    /// Called once, when the object is inserted into a context: set initial values here.
    open func awakeFromInsert() {}
    /// Called when a fault is fulfilled from the store.
    open func awakeFromFetch() {}
    /// Called after the object's values were replaced from a snapshot: rollback, refresh, merge.
    open func awake(fromSnapshotEvents events: SnapshotEvents) {}
    /// Called before a save writes the object (inserted, updated or deleted). Changes made here
    /// are saved; a save that keeps changing objects here is stopped after 16 rounds
    /// (`StrataError.misuse`).
    open func willSave() {}
    /// Called after a save wrote the object.
    open func didSave() {}
    /// Called when the object is deleted in its context, before its delete rules run at save.
    open func prepareForDeletion() {}
    /// Called before the object turns into a fault, which happens when:
    /// - ``ModelContext/refresh(_:mergeChanges:)`` drops its changes (`false`), or finds none to
    ///   keep (`true`; ``ModelContext/refreshAllObjects()`` likewise);
    /// - its row is gone: its deletion was saved by its own context (after ``didSave()``), a
    ///   merged save deleted it (``ModelContext/mergeChanges(from:)-(SaveNotification)`` or an automatic merge, a
    ///   cascade of its own context's save included), or a refresh or a save's merge policy
    ///   found it deleted. It stays ``isDeleted``; ``ModelContext/load(_:)`` then throws
    ///   `objectNotFound` and its properties read as placeholders.
    ///
    /// Not called when the object leaves its context keeping its values (``ModelContext/reset()``,
    /// the rollback of an insert) nor when its container closes.
    open func willTurnIntoFault() {}
    /// Called after the object turned into a fault (``isFault`` is true), on every path
    /// ``willTurnIntoFault()`` lists: release caches and custom state here.
    open func didTurnIntoFault() {}

    // MARK: Validation (override; throw `StrataError.invalidObject` or any `StrataError`)

    /// Checks one property's new value before save; `key` names the property.
    open func validateValue(_ value: Any?, forKey key: String) throws {}
    /// Checks an inserted object before save (the model's rules are checked by the store).
    open func validateForInsert() throws {}
    /// Checks an updated object before save.
    open func validateForUpdate() throws {}
    /// Checks an object about to be deleted.
    open func validateForDelete() throws {}

    /// The entity's name in the model: the class's name unless overridden.
    open class var entityName: String { String(describing: self) }

    /// Uniqueness constraints over several properties (single properties: `@Attribute(.unique)`).
    open class var uniquenessConstraints: [[String]] { [] }

    /// Fetch indexes over several properties, in key order (single properties: `.indexed`).
    open class var fetchIndexes: [[String]] { [] }

    /// Word indexes (``FullTextIndex``), each over one or more string properties, stored or
    /// derived: what ``ModelContext/search(_:matching:in:match:limit:)`` searches.
    open class var fullTextIndexes: [[String]] { [] }

    /// The class's computed properties: getters that call
    /// ``ModelObject/computed(_:dependsOn:value:)-(_,PartialKeyPath<Self>...,_)`` or
    /// ``ModelObject/cached(_:dependsOn:value:)-(_,PartialKeyPath<Self>...,_)``,
    /// declared in the class, an extension or a subclass. Listed here, each is known with its
    /// dependencies from the moment a container opens: a change of a dependency names it in
    /// ``changedValuesForCurrentEvent()`` and objects-did-change, and a fetch that filters or
    /// sorts by it says it is computed, before any object has read it. One not listed becomes
    /// known when it is first read (or observed) in the process.
    ///
    /// ```swift
    /// override class var computedProperties: [AnyKeyPath] { [\Person.fullName, \Person.initials] }
    /// ```
    ///
    /// A container refuses (`StrataError.invalidModel`) a key path that is not such a property
    /// of the class, or whose dependencies name no property.
    open class var computedProperties: [AnyKeyPath] { [] }

    // MARK: Identity

    /// Identity: the same object. Never fires a fault.
    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }

    /// Hashes the object's identity. Never fires a fault.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// `Entity/pk` and the fault state. Never fires a fault.
    open var description: String {
        "<\(type(of: self)) \(objectID)\(isFault ? " fault" : "")\(isDeleted ? " deleted" : "")>"
    }

    /// The object's schema once known (set by its context, or on first use).
    final var _schema: EntitySchema? {
        get { _schemaRef?.takeUnretainedValue() }
        set { _schemaRef = newValue.map { Unmanaged.passUnretained($0) } }
    }

    /// The object's schema (built on first use of the class).
    final var entitySchema: EntitySchema {
        if let schema = _schema { return schema }
        let schema = EntitySchema.of(type(of: self))
        _schema = schema
        return schema
    }

    final var extras: ObjectExtras {
        if let extras = _extras { return extras }
        let extras = ObjectExtras()
        _extras = extras
        return extras
    }

    /// The identifier of the object (temporary until saved). Never fires a fault.
    public final var objectID: ManagedObjectID {
        // A registered object keeps the identity it is registered under, even 0 (a fault of a
        // forged row or to-one): renaming it would leave the registry pointing at it once freed.
        if _rawID == 0 && !_flags.contains(.registered) { _rawID = ManagedObjectID.makeTemporaryRawValue() }
        return ManagedObjectID(entityName: entitySchema.name, rawValue: _rawID)
    }

    /// The context the object is registered with, or `nil` (not inserted yet, or the context
    /// is gone). Never fires a fault.
    public final var context: ModelContext? { _flags.contains(.registered) ? _context : nil }

    /// The entity's name. Never fires a fault.
    public final var entityName: String { entitySchema.name }
}

extension ManagedObject {
    /// Records that `slot` changed in the current event.
    @inline(__always)
    final func noteEventChange(slot: Int) {
        if slot >= 0, slot < ObjectFlags.eventSlotCount {
            _flags.insert(.eventSlot(slot))
        } else if !(_extras?.eventChanges.contains(slot) ?? false) {
            extras.eventChanges.insert(slot)
        }
    }

    /// The slots changed in the current event.
    final var eventChangedSlots: SlotSet {
        var slots = _extras?.eventChanges ?? []
        let bits = (_flags.rawValue & ObjectFlags.eventSlots.rawValue) >> UInt16(ObjectFlags.eventSlotShift)
        for slot in 0..<ObjectFlags.eventSlotCount where bits & (1 << UInt16(slot)) != 0 { slots.insert(slot) }
        return slots
    }

    /// Ends the current event: ``changedValuesForCurrentEvent()`` is empty again.
    final func clearEvents() {
        _flags.subtract(.eventSlots)
        _extras?.clearEvents()
    }
}
