import StrataRecords
import StrataStorage
import Synchronization

/// A unit of work over a ``ModelContainer``: objects fetched and inserted through it, their
/// changes, and the save that writes them. One object per stored object per context
/// (uniquing); fetched objects are faults until a persistent property is read.
///
/// Not `Sendable`: a context and its objects live in one isolation domain (a task, an actor, the
/// main actor). Send ``ManagedObjectID``s between domains and look them up with
/// ``object(with:)`` in the other domain's context.
public final class ModelContext {
    /// The container whose store the context reads and saves.
    public let container: ModelContainer
    /// How a save resolves conflicts with changes other saves made since this context read
    /// its objects. Default: ``MergePolicy/error``.
    public var mergePolicy: MergePolicy = .error
    /// The name the store's persistent history records for this context's saves
    /// (`HistoryTransaction.author`), as Core Data's `transactionAuthor`: lets a reader of the
    /// history tell its own saves from others'. `nil` records none.
    public var author: String?
    /// Statistics, for tests and tuning.
    @exclusivity(unchecked) package internal(set) var statistics = Statistics()

    struct Key: Hashable {
        var entity: Int
        var raw: Int64

        /// The hash `Dictionary` and `Set` use: one word (entity index in the top 16 bits),
        /// mixed without `Hasher` (the change sets hash each changed object's key; see
        /// `WordHash`). Equal keys hash equally; the rare colliding ones differ by `==`.
        func _rawHashValue(seed: Int) -> Int {
            WordHash.hash(UInt64(truncatingIfNeeded: entity) << 48 ^ UInt64(bitPattern: raw), seed: seed)
        }
    }

    // The fields a fault, a fetch and a release touch are not checked for exclusivity at run time
    // (decision 48: a `swift_beginAccess` call an access, several per fetched object). Their
    // mutations run no other code while the access lasts (no hook, no observer, no call back into
    // the context), so no two accesses can overlap; keep it so.

    /// Every registered object, unowned: an object removes itself when released, so objects
    /// the program no longer holds and that have no changes cost nothing here.
    @exclusivity(unchecked) var registry = ObjectRegistry()
    /// Changed objects, held strongly until saved or rolled back. Unchecked too: a setter
    /// and a save touch them per object, and no access is ever held across other code (they
    /// are never passed `inout`, nor changed through a method that takes a closure).
    @exclusivity(unchecked) var inserted: [Key: ManagedObject] = [:]
    @exclusivity(unchecked) var insertOrder: [Key] = []
    @exclusivity(unchecked) var updated: [Key: ManagedObject] = [:]
    /// The newest commit whose changes this context took in (its own saves and merged ones): a
    /// save merged after it carries older values (``merge(_:)``).
    var newestMergedTransactionID: UInt64 = 0
    @exclusivity(unchecked) var deleted: [Key: ManagedObject] = [:]
    /// Many-to-many links made or broken since the last save.
    var pendingLinks: [LinkChange] = []
    /// Misuse seen by property setters (which cannot throw); the next save throws it.
    var misuse: [StrataError] = []
    /// Temporary raw identifiers of saved objects, to their primary keys.
    @exclusivity(unchecked) var permanentIDs: [Int64: Int64] = [:]
    /// The container's record store, at hand: every fault asks it for the latest commit.
    private let store: RecordStore
    /// The snapshot faults are read from.
    @exclusivity(unchecked) var reading: RecordSnapshot? {
        didSet {
            readingReader = reading?.reader
            readingTransactionID = reading?.transactionID ?? 0
        }
    }
    /// `reading`'s reader and commit, kept at hand: every fault that fires asks for them, and
    /// reaching them through the snapshot cost a retain and a release of it and a call per
    /// fault, and atomic reference counts are much of a fault's time (decision 75).
    @exclusivity(unchecked) private var readingReader: RecordReader?
    @exclusivity(unchecked) private var readingTransactionID: UInt64 = 0
    /// Set when the context is pinned to a query generation.
    var pinned = false
    /// Faults a fetch with a `fetchBatchSize` made, by identity, to the batch they load with.
    @exclusivity(unchecked) var faultBatches: [Key: FaultBatch] = [:]
    /// Rows a fetch's scan read for the faults it returned (decisions 47, 48), from the commit
    /// `reading` holds: a fault takes its row out of here, so what is held shrinks as they
    /// fire. Dropped when the context reads a newer commit, or resets.
    @exclusivity(unchecked) var rowCache = RowCache()
    /// Rows prefetching read, from the commit `reading` holds: a fault of one of them takes
    /// its row from here (a target released and reached again reads nothing either). Dropped
    /// when the context reads a newer commit, or resets.
    @exclusivity(unchecked) var prefetchedRows: [Key: [StoredValue]] = [:]
    let inbox = SaveMailbox()
    /// ``automaticallyMergesChangesFromStore``'s value.
    var mergesAutomatically = false
    /// Change sequences (``FetchResults``, ``ObjectUpdates``) iterating over this context.
    var liveChangeSequences = 0
    /// The change in progress: what it touched, told when it ends.
    let changeBatch = ChangeBatch()
    /// Objects-did-change observers, and what they have not been told yet.
    /// Unchecked: every property change asks whether it is empty (`hasChangeObservers`), which
    /// paid a run-time exclusivity check; it is appended to, filtered and copied for iteration
    /// (telling runs on the copy), never held across a call.
    @exclusivity(unchecked) var changeObservers: [(Int, (ObjectsDidChange) -> Void)] = []
    var nextObserverID = 0
    var pendingChange = ObjectsDidChange()
    /// ``undoStack``'s value: what records the context's changes for undo, if anything does.
    var undoRecorder: UndoStack?
    /// By entity index, the entities with a to-one to it (`clearToOnes(naming:_:)`), found once.
    var entitiesNaming: [Int: [Int]] = [:]

    struct LinkChange {
        var owner: ManagedObject
        var slot: Int
        var member: ManagedObject
        var added: Bool
        /// Each link is listed from both sides; the save writes the primary one.
        var isPrimary: Bool
    }

    /// Counters of what the context read.
    package struct Statistics: Sendable, Equatable {
        /// Rows read to fulfil faults (one per object, fewer with batch faulting).
        package var faultsFired = 0
        /// Fetch requests run against the store.
        package var fetches = 0
        /// Saves that wrote to the store.
        package var saves = 0
        /// Reads of rows to fulfil faults: one per fault, or one per batch with batch faulting
        /// and prefetching.
        package var rowReads = 0
    }

    /// A context over `container`'s store.
    public init(_ container: ModelContainer) {
        self.container = container
        self.store = container.store
        changeBatch.context = self
    }

    // No registered object outlives its context: each holds it (decision 32) and unregisters
    // in its own deinit.
    deinit { container.detach(inbox) }

    // MARK: Registry

    // Inlined: the bindings are the container's constants, so a caller then borrows one
    // instead of retaining and releasing it (a pair per fault fired).
    @inline(__always)
    func binding(_ object: ManagedObject) -> EntityBinding? { container.binding(of: object.entitySchema) }

    func key(_ object: ManagedObject, _ binding: EntityBinding) -> Key {
        Key(entity: binding.index, raw: object._rawID)
    }

    /// The registered object for `raw` of entity `binding`, or a new fault registered for it.
    func object(raw: Int64, binding: EntityBinding) -> ManagedObject {
        let raw = raw < 0 ? (permanentIDs[raw] ?? raw) : raw
        let key = Key(entity: binding.index, raw: raw)
        if let registered = registry[key] { return registered.takeUnretainedValue() }
        let object = binding.schema.objectClass.init()
        object._schema = binding.schema
        object._rawID = raw
        object._context = self
        object._flags = [.fault, .registered]
        // The class's init() runs no code of the context's, so the key is still free.
        registry.insert(Unmanaged.passUnretained(object), underAbsent: key)
        return object
    }

    func objectDidDeallocate(_ object: ManagedObject) {
        guard let schema = object._schemaRef, let entity = schema._withUnsafeGuaranteedRef({ container.entityIndex(of: $0) })
        else { return }
        let objectKey = Key(entity: entity, raw: object._rawID)
        if registry.remove(objectKey, ifItIs: object), !faultBatches.isEmpty {
            faultBatches.removeValue(forKey: objectKey)
        }
    }

    /// The registered objects (those the program or the context still holds).
    public var registeredObjects: Set<ManagedObject> { Set(registry.objects) }
    /// Objects inserted and not saved yet.
    public var insertedObjects: Set<ManagedObject> { Set(inserted.values) }
    /// Objects with unsaved changes (not inserted, not deleted).
    public var updatedObjects: Set<ManagedObject> { Set(updated.values) }
    /// Objects deleted and not saved yet.
    public var deletedObjects: Set<ManagedObject> { Set(deleted.values) }
    /// Whether anything is inserted, updated or deleted and not saved.
    public var hasChanges: Bool { !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty || !pendingLinks.isEmpty }

    // MARK: Reading

    /// The reader faults and fetches use: the pinned snapshot, or the latest commit.
    func reader() throws -> RecordReader {
        try keepReadingCurrent()
        guard let current = readingReader else { return try readLatest() }
        return current
    }

    /// Makes `reading` the snapshot ``reader()`` answers with, without taking a reference to it.
    @inline(__always)
    private func keepReadingCurrent() throws {
        try container.requireOpen("reading the store")
        if readingReader == nil || !pinned && readingTransactionID != store.lastCommitID {
            _ = try readLatest()
        }
    }

    /// Moves `reading` to the latest commit (what was read ahead from the old one goes).
    @inline(never)
    private func readLatest() throws -> RecordReader {
        reading?.close()
        rowCache.removeAll()
        prefetchedRows = [:]
        let snapshot = try container.store.snapshot()
        reading = snapshot
        return snapshot.reader
    }

    /// The stored row `pk` of entity `binding`, read with `reading`'s reader borrowed (call
    /// after ``keepReadingCurrent()``): nothing can replace the reader while one row is read
    /// (no code of the program's runs), and a fault paid a retain and a release for the
    /// reference ``reader()`` returns.
    private func storedRow(_ pk: UInt64, _ binding: EntityBinding) throws -> [StoredValue]? {
        guard let reader = readingReader.map(Unmanaged.passUnretained) else { return nil }
        return try reader._withUnsafeGuaranteedRef { try $0.storedRow(entityIndex: binding.index, primaryKey: pk) }
    }

    /// Loads a fault's values (and those of the other faults of its batch, when a fetch with
    /// a `fetchBatchSize` made it). A row that cannot be read (deleted by another save, an I/O
    /// error) leaves the object with placeholder values and the error in `faultError`, for
    /// ``load(_:)`` to throw: a property read never traps on a store condition.
    func fulfill(_ object: ManagedObject) {
        guard let binding = binding(object) else {
            object._flags.remove(.fault)
            object._values = object.entitySchema.initialValues
            return
        }
        if !faultBatches.isEmpty, let batch = faultBatches.removeValue(forKey: key(object, binding)) {
            var objects = [object]
            for raw in batch.raws where raw != object._rawID {
                let objectKey = Key(entity: binding.index, raw: raw)
                guard faultBatches.removeValue(forKey: objectKey) != nil, let registered = registry[objectKey] else {
                    continue
                }
                objects.append(registered.takeUnretainedValue())
            }
            fulfill(objects.filter(\.isFault), binding)
            return
        }
        // One object: no arrays (the common case, on every first read of a fetched object).
        object._flags.remove(.fault)
        statistics.faultsFired += 1
        do {
            try keepReadingCurrent()
            let raw = object._rawID
            // The row is moved from where it is read into the object: binding an optional row
            // and passing it on copied it (a retain and a release per fault).
            if let ahead = rowReadAhead(of: raw, binding) {
                return load(object, ahead, binding)
            }
            guard raw > 0 else { return failFulfilment(object, binding, .objectNotFound(entity: binding.name, primaryKey: 0)) }
            statistics.rowReads += 1
            guard let row = try storedRow(UInt64(raw), binding) else {
                return failFulfilment(object, binding, .objectNotFound(entity: binding.name, primaryKey: UInt64(raw)))
            }
            load(object, row, binding)
        } catch {
            failFulfilment(object, binding, (error as? StrataError) ?? .invalidArgument("\(error)"))
        }
    }

    /// Gives a fault its stored row's values.
    private func load(_ object: ManagedObject, _ row: __owned [StoredValue], _ binding: EntityBinding) {
        // Moved in; one reference added for the snapshot.
        object._values = binding.values(fromRow: row)
        object._snapshot = object._values
        object._extras?.faultError = nil
        runHook(object) { $0.awakeFromFetch() }
    }

    /// Loads the values of `objects` (faults of entity `binding`) with one read of many rows.
    func fulfill(_ objects: [ManagedObject], _ binding: EntityBinding) {
        guard !objects.isEmpty else { return }
        for object in objects { object._flags.remove(.fault) }
        statistics.faultsFired += objects.count
        var rows: [[StoredValue]?]
        do {
            let recordReader = try reader()
            rows = objects.map { rowReadAhead(of: $0._rawID, binding) }
            let missing = rows.indices.filter { rows[$0] == nil }
            if !missing.isEmpty {
                statistics.rowReads += 1
                let read = try recordReader.storedRows(of: binding.name,
                                                       primaryKeys: missing.map { UInt64(max(objects[$0]._rawID, 0)) })
                for (i, row) in zip(missing, read) { rows[i] = row }
            }
        } catch {
            for object in objects {
                failFulfilment(object, binding, (error as? StrataError) ?? .invalidArgument("\(error)"))
            }
            return
        }
        for (object, row) in zip(objects, rows) {
            guard let row, object._rawID > 0 else {
                failFulfilment(object, binding,
                               .objectNotFound(entity: binding.name, primaryKey: UInt64(max(object._rawID, 0))))
                continue
            }
            load(object, row, binding)
        }
    }

    /// Loads the faults among `objects` (a fetch's results, in its order) from the rows its
    /// scan kept, `rows` parallel to them: no second read. A fault whose row was not kept or
    /// does not decode stays one (``fulfill(_:_:)`` then reads it, and reports what it finds).
    func load(_ objects: [ManagedObject], fromScanned rows: FetchedRowBytes, _ binding: EntityBinding) {
        guard rows.keptCount > 0, rows.spans.count == objects.count else { return }
        let entity = binding.entity
        for (index, object) in objects.enumerated() where object._flags.contains(.fault) && object._rawID > 0 {
            guard let row = try? rows.decodeRow(at: index, of: entity) else { continue }
            object._flags.remove(.fault)
            statistics.faultsFired += 1
            load(object, row, binding)
        }
    }

    /// The row of `raw` a fetch's scan or prefetching read from the commit the context reads,
    /// if either did (call after ``reader()``, which drops them when the commit moved).
    /// Inlined with its emptiness test first: most faults fire with nothing read ahead, and
    /// should not pay for a call.
    @inline(__always)
    private func rowReadAhead(of raw: Int64, _ binding: EntityBinding) -> [StoredValue]? {
        guard rowCache.count > 0 || !prefetchedRows.isEmpty else { return nil }
        return rowCache.take(entity: binding.entity, raw: raw)
            ?? (prefetchedRows.isEmpty ? nil : prefetchedRows[Key(entity: binding.index, raw: raw)])
    }

    private func failFulfilment(_ object: ManagedObject, _ binding: EntityBinding, _ error: StrataError) {
        object._values = binding.schema.initialValues
        object.extras.faultError = error
    }

    /// Loads the object's values if it is a fault, and throws if they cannot be read (its row
    /// was deleted by another save: `objectNotFound`; an I/O error): the way to read for code
    /// that must know.
    public func load(_ object: ManagedObject) throws {
        try checkOwn(object)
        if object._extras?.faultError != nil { object._flags.insert(.fault) }
        if object._flags.contains(.fault) { fulfill(object) }
        if let error = object._extras?.faultError { throw error }
    }

    func runHook(_ object: ManagedObject, _ hook: (ManagedObject) -> Void) {
        let was = object._flags.contains(.inHook)
        object._flags.insert(.inHook)
        hook(object)
        if !was { object._flags.remove(.inHook) }
    }

    func checkOwn(_ object: ManagedObject) throws {
        guard object.context === self else {
            throw StrataError.misuse("\(object.objectID) belongs to "
                                     + "\(object.context == nil ? "no context" : "another context")")
        }
    }

    // MARK: Identity lookups

    /// The object with `id` in this context: the registered one, or a fault for it (not checked
    /// against the store; reading it fails if the object does not exist: use
    /// ``existingObject(with:)`` to know). Throws `misuse` for an entity not in the model, a
    /// temporary identifier this context never made, or an identifier made from a primary key no
    /// object can have (0, or above `Int64.max`).
    public func object(with id: ManagedObjectID) throws -> ManagedObject {
        processPendingMerges()
        guard let binding = container.binding(named: id.entityName) else {
            throw StrataError.misuse("no entity '\(id.entityName)' in the container's model")
        }
        guard id.rawValue != 0 else {
            throw StrataError.misuse("\(id.entityName) identifier without a primary key: "
                                     + "objects have keys from 1 to \(Int64.max)")
        }
        if id.isTemporaryID {
            let raw = permanentIDs[id.rawValue] ?? id.rawValue
            guard let registered = registry[Key(entity: binding.index, raw: raw)] else {
                throw StrataError.misuse("\(id) is a temporary identifier of another context (save it there first)")
            }
            return registered.takeUnretainedValue()
        }
        return object(raw: id.rawValue, binding: binding)
    }

    /// The object with `id`, loaded: throws `objectNotFound` if it does not exist (or was
    /// deleted in this context).
    public func existingObject(with id: ManagedObjectID) throws -> ManagedObject {
        let found = try object(with: id)
        if found.isDeleted { throw StrataError.objectNotFound(entity: id.entityName, primaryKey: id.primaryKey ?? 0) }
        if !found.isInserted { try load(found) }
        return found
    }

    /// The object with `id` as a `T`.
    public func existingObject<T: ManagedObject>(with id: ManagedObjectID, as type: T.Type) throws -> T {
        let object = try existingObject(with: id)
        guard let typed = object as? T else {
            throw StrataError.misuse("\(id) is a \(Swift.type(of: object)), not a \(T.self)")
        }
        return typed
    }

    // MARK: Insert and delete

    /// Inserts an object made by the program (and the objects its relationships reach that
    /// belong to no context yet). Inserting an object already in this context does nothing;
    /// one of another context, or of a class outside the model, is recorded as misuse and makes
    /// the next ``save()`` throw.
    public func insert(_ object: ManagedObject) {
        insert(object, awaking: true)
    }

    /// ``insert(_:)``; `awaking` false skips `awakeFromInsert` (an insert undone and redone, as
    /// Core Data's, is not a new object's first insert).
    func insert(_ object: ManagedObject, awaking: Bool) {
        if object.context === self { return }
        if object.context != nil {
            misuse.append(.misuse("\(object.objectID) is registered in another context and cannot be inserted here"))
            return
        }
        guard let binding = binding(object) else {
            misuse.append(.misuse("\(type(of: object)) is not one of the container's model classes"))
            return
        }
        if object._rawID == 0 || object._rawID > 0 && object._flags.contains(.gone) {
            object._rawID = ManagedObjectID.makeTemporaryRawValue()
        }
        if object._values.isEmpty { object._values = binding.schema.initialValues }
        object._flags = object._flags.intersection([.observedAccess, .eventSlots]).union([.registered, .inserted])
        object._context = self
        object._schema = binding.schema
        let objectKey = key(object, binding)
        registry[objectKey] = Unmanaged.passUnretained(object)
        inserted[objectKey] = object
        insertOrder.append(objectKey)
        recordInsert(object)
        recordingUndo?.recording.didInsert(object)
        if awaking { runHook(object) { $0.awakeFromInsert() } }
        if let extras = object._extras {
            misuse += extras.pendingMisuse
            extras.pendingMisuse = []
            let toOne = extras.detachedToOne
            let toMany = extras.detachedToMany
            extras.detachedToOne = [:]
            extras.detachedToMany = [:]
            for (slot, target) in toOne.sorted(by: { $0.key < $1.key }) { setTarget(target, slot: slot, of: object) }
            for (slot, members) in toMany.sorted(by: { $0.key < $1.key }) {
                setMembers(members, slot: slot, of: object)
            }
        }
    }

    /// Deletes an object: at the next save its row goes, and its delete rules cascade, nullify
    /// or deny. Until then it stays registered with ``ManagedObject/isDeleted`` set and leaves
    /// to-many relationships at once; after the save it is a fault (its `didSave`, then
    /// `willTurnIntoFault` and `didTurnIntoFault`, run). An inserted object is forgotten at
    /// once: its cascade rules delete what they reach now (as a save would have), other unsaved
    /// objects' to-ones naming it are cleared and its many-to-many links dropped.
    ///
    /// Throws `misuse` for an object of another context (or of none).
    public func delete(_ object: ManagedObject) throws {
        try delete(object, preparing: true)
    }

    /// ``delete(_:)``; `preparing` false skips `prepareForDeletion` (an insert undone, an object
    /// a rule deletes: as the store's cascades, which run no hook).
    func delete(_ object: ManagedObject, preparing: Bool) throws {
        try checkOwn(object)
        guard let binding = binding(object) else { return }
        let objectKey = key(object, binding)
        if object._flags.contains(.deleted) { return }
        if let undo = recordingUndo { recordDeleteForUndo(object, undo) }
        if preparing { runHook(object) { $0.prepareForDeletion() } }
        recordDelete(object)
        // Its to-one targets' to-manys no longer list it (members leave out deleted objects).
        changeBatch.depth += 1
        defer { changeBatch.end() }
        if !object.isFault { touchInversesOfToOnes(object) }
        if object._flags.contains(.inserted) {
            inserted.removeValue(forKey: objectKey)
            insertOrder.removeAll { $0 == objectKey }
            object._flags.remove(.inserted)
            object._flags.insert(.deleted)          // first: a cascade that comes back stops here
            cascadeFromInserted(object, binding)
            clearToOnes(naming: object, binding)
            registry.removeValue(forKey: objectKey)
            object._flags.remove(.registered)
            object._context = nil
            // Its links go with it: nothing is left to link (members would name a forgotten identity).
            pendingLinks.removeAll { $0.owner === object || $0.member === object }
            return
        }
        updated.removeValue(forKey: objectKey)
        object._flags.remove(.updated)
        object._flags.insert(.deleted)
        deleted[objectKey] = object
    }

    // MARK: Changing values

    /// Sets a stored property; `isEvent` false (a primitive set) records the change for the
    /// save but not as an event of ``ManagedObject/changedValuesForCurrentEvent()``.
    func setValue(_ value: StoredValue, slot: Int, of object: ManagedObject, isEvent: Bool = true) {
        object._prepareValues()
        guard slot < object._values.count else { return }
        if object.isDeleted {
            misuse.append(.misuse("\(object.objectID) is deleted: "
                                  + "its '\(object.entitySchema.properties[slot].name)' cannot be set"))
            return
        }
        // The slot's kind, not its declaration: a `Property` would be copied on every set
        // (decision 48).
        let kind = object.entitySchema.slotKinds[slot]
        if kind == .derived {
            misuse.append(.validation(entity: object.entityName, property: object.entitySchema.properties[slot].name,
                                      reason: "a derived attribute cannot be set"))
            return
        }
        if object._values[slot].isIdentical(to: value) { return }
        if !isEvent, object._flags.contains(.inHook), kind == .transient {
            // A primitive set of a transient in an awake hook sets its starting value: a
            // baseline, not a change (Core Data's contract for awakeFromFetch).
            object._values[slot] = value
            if slot < object._snapshot.count { object._snapshot[slot] = value }
            return
        }
        if isEvent, let undo = recordingUndo { undo.recording.willChange(object, slot: slot) }
        ChangeBatch.set(value, slot: slot, of: object, in: changeBatch) {
            markUpdated(object, slot: slot, isEvent: isEvent)
        }
    }

    func markUpdated(_ object: ManagedObject, slot: Int, isEvent: Bool = true) {
        if isEvent { object.noteEventChange(slot: slot) }
        guard !object._flags.contains(.inserted), !object._flags.contains(.deleted),
              let binding = binding(object) else { return }
        if !object._flags.contains(.updated) {
            object._flags.insert(.updated)
            updated[key(object, binding)] = object
        }
    }
}

/// Faults that load together: the primary keys of one `fetchBatchSize` slice of a fetch.
final class FaultBatch {
    let raws: [Int64]
    init(raws: [Int64]) { self.raws = raws }
}
