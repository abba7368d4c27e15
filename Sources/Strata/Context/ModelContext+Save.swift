import Foundation
import StrataRecords
import StrataStorage

extension ModelContext {
    /// Writes every change in one transaction of the store: inserts, updates, relationship
    /// changes, deletes (their delete rules run in the store), with the model's derived values,
    /// uniqueness and validation settled as the record layer settles them. Afterwards saved
    /// objects hold their permanent identifiers and the store's values, derived ones included.
    ///
    /// Throws (and leaves the context as it was): the misuse property setters recorded,
    /// `invalidObject`/`multipleErrors` for objects that fail their validation,
    /// `mergeConflicts` under ``MergePolicy/error``, and the record layer's commit errors.
    ///
    /// Returns what the save changed, as other contexts and the container's observers get it
    /// (nil when there was nothing to save).
    @discardableResult
    public func save() throws -> SaveNotification? {
        processPendingMerges()
        try container.requireOpen("save")
        if !misuse.isEmpty {
            let found = misuse
            misuse = []
            throw found.count == 1 ? found[0] : .multipleErrors(found)
        }
        guard hasChanges else {
            closeUndoStep()
            return nil
        }
        postObjectsDidChange()
        // The updated and deleted objects in key order, sorted once for the hooks, validation
        // and the write; sorted again only after a hook changed a set (its storage then
        // differs: copy on write).
        var sets = (updated, deleted)
        var ordered = (updated: Self.inKeyOrder(updated), deleted: Self.inKeyOrder(deleted))
        func reorder() {
            if !Self.sameStorage(sets.0, updated) { ordered.updated = Self.inKeyOrder(updated) }
            if !Self.sameStorage(sets.1, deleted) { ordered.deleted = Self.inKeyOrder(deleted) }
            sets = (updated, deleted)
        }
        try runWillSave(ordered)
        // The event ends here: what `willSave` changed belongs to the step of what it saves.
        closeUndoStep()
        reorder()
        try validateChanges(ordered)
        reorder()
        let saving = (inserted: insertOrder.compactMap { inserted[$0] }, updated: ordered.updated,
                      deleted: ordered.deleted)
        if saving.inserted.isEmpty && saving.deleted.isEmpty && pendingLinks.isEmpty
            && !saving.updated.contains(where: {
                $0.hasPersistentChangedValues || $0._extras?.changedToMany.isEmpty == false
            }) {
            // Only transient attributes changed: nothing to write (no commit, no sync).
            updated = [:]
            for object in saving.updated {
                object._flags.remove(.updated)
                object.clearEvents()
                keepTransientValues(of: object)
            }
            for object in saving.updated { runHook(object) { $0.didSave() } }
            return nil
        }
        var conflicts: [MergeConflictRecord] = []
        var storeWins: [(ManagedObject, [StoredValue]?)] = []
        let (pks, changes) = try container.whileOpen("save") {
            try container.store.writeReportingChanges { tx -> ChangeWriter in
                tx.author = author
                var writer = ChangeWriter(context: self, tx: tx)
                tx.reserveRows(saving.inserted.count + saving.updated.count + saving.deleted.count)
                try writer.insert(saving.inserted)
                for object in saving.updated {
                    guard let binding = binding(object), let pk = writer.recordKey(object._rawID) else { continue }
                    // The row as stored, compared slot by slot in place (stored slots all have a
                    // row field); the object's form of it is made only where a policy needs it.
                    let row = try tx.unsettledRow(entityIndex: binding.index, primaryKey: UInt64(pk))
                    var write = writer.changedSlots(object, binding)
                    let snapshot = object._snapshot
                    var conflicting: [Int] = []
                    if !snapshot.isEmpty {
                        if let row {
                            conflicting = row.withUnsafeBufferPointer { rowBuffer in
                                snapshot.withUnsafeBufferPointer { snapshotBuffer in
                                    binding.lockedSlots.filter { slot in
                                        let field = binding.rowField[slot]
                                        guard field < rowBuffer.count, slot < snapshotBuffer.count else {
                                            return !binding.schema.initialValues[slot].isIdentical(to: snapshot[slot])
                                        }
                                        return !StoredValue.identical(rowBuffer, field, snapshotBuffer, slot)
                                    }
                                }
                            }
                        } else {
                            conflicting = binding.lockedSlots
                        }
                    }
                    if row == nil || !conflicting.isEmpty {
                        let stored = row.map { binding.values(fromRow: $0) }
                        switch mergePolicy {
                        case .error:
                            conflicts.append(conflictRecord(object, binding, conflicting, stored))
                            continue
                        case .rollback:
                            storeWins.append((object, stored))
                            continue
                        case .overwrite:
                            write = binding.lockedSlots
                        case .mergeByPropertyObjectTrump:
                            break
                        case .mergeByPropertyStoreTrump:
                            write.removeAll { conflicting.contains($0) }
                        }
                        if stored == nil { storeWins.append((object, nil)); continue }
                    }
                    try writer.update(object, binding, slots: write)
                }
                try writer.writeLinks(pendingLinks)
                try writer.delete(saving.deleted)
                if !conflicts.isEmpty { throw StrataError.mergeConflicts(conflicts) }
                return writer
            }
        }
        statistics.saves += 1
        for (temp, pk) in pks.writtenOrder where temp < 0 { permanentIDs[temp] = pk }
        return finishSave(saving, pks: pks.written, changes: changes, storeWins: storeWins)
    }

    private func conflictRecord(_ object: ManagedObject, _ binding: EntityBinding, _ slots: [Int],
                                _ stored: [StoredValue]?) -> MergeConflictRecord {
        let names = slots.map { binding.schema.properties[$0].name }
        func text(_ values: [StoredValue]) -> [String: String] {
            Dictionary(uniqueKeysWithValues: slots.map { (binding.schema.properties[$0].name, values[$0].description) })
        }
        return MergeConflictRecord(entity: binding.name, primaryKey: UInt64(max(object._rawID, 0)), properties: names,
                                   snapshot: text(object._snapshot), cached: text(object._values),
                                   persisted: stored.map(text))
    }

    /// `willSave` on every changed object, then again on each object whose values changed
    /// since its last `willSave` began (by its own hook or another's), until none changes: at
    /// most 16 rounds, then the save fails (`misuse`), as a hook that never settles would
    /// otherwise loop forever (Core Data's documented trap).
    ///
    /// While no hook changes the change sets, every round is over the objects of the first
    /// (their sets' storage stays the very same: copy on write), so an array beside them holds
    /// what each held when its hook began and ``unchanged(_:_:)`` answers by buffer identity,
    /// with no table by identity. A hook that inserts, updates or deletes another object sends
    /// the remaining rounds through ``runWillSaveRounds(from:before:held:)``, which rebuilds
    /// the list each round.
    private func runWillSave(_ ordered: (updated: [ManagedObject], deleted: [ManagedObject])) throws {
        let sets = (inserted, insertOrder, updated, deleted)
        var round: [ManagedObject] = []
        round.reserveCapacity(inserted.count + updated.count + deleted.count)
        for key in insertOrder { if let object = inserted[key] { round.append(object) } }
        round.append(contentsOf: ordered.updated)
        round.append(contentsOf: ordered.deleted)
        if round.isEmpty { return }
        var before: [[StoredValue]] = []
        before.reserveCapacity(round.count)
        for object in round {
            before.append(object._values)
            runHook(object) { $0.willSave() }
        }
        for pass in 1..<16 {
            guard Self.sameStorage(sets.0, inserted), Self.sameStorage(sets.1, insertOrder),
                  Self.sameStorage(sets.2, updated), Self.sameStorage(sets.3, deleted) else {
                var table = KeyTable<[StoredValue]>(capacity: round.count, scattered: true)
                for (object, values) in zip(round, before) { table[ObjectSet.address(object)] = values }
                return try runWillSaveRounds(from: pass, before: table, held: round)
            }
            let pending = round.indices.filter { !Self.unchanged(before[$0], round[$0]._values) }
            if pending.isEmpty { return }
            for i in pending {
                before[i] = round[i]._values
                runHook(round[i]) { $0.willSave() }
            }
        }
        var table = KeyTable<[StoredValue]>(capacity: round.count, scattered: true)
        for (object, values) in zip(round, before) { table[ObjectSet.address(object)] = values }
        try runWillSaveRounds(from: 16, before: table, held: round)
    }

    /// Rounds `first` to 15 of ``runWillSave(_:)``, each over the objects the change sets hold
    /// then; `before` holds (by address) what each object held when its last `willSave` began,
    /// and `held` keeps those objects alive, so no address is reused by an object a hook makes.
    private func runWillSaveRounds(from first: Int, before: KeyTable<[StoredValue]>, held: [ManagedObject]) throws {
        var before = before
        var held = held
        for _ in first..<max(first, 16) {
            var all: [ManagedObject] = []
            for key in insertOrder { if let object = inserted[key] { all.append(object) } }
            all.append(contentsOf: Self.inKeyOrder(updated))
            all.append(contentsOf: Self.inKeyOrder(deleted))
            let pending = all.filter { object in
                guard let values = before[ObjectSet.address(object)] else { return true }
                return !Self.unchanged(values, object._values)
            }
            if pending.isEmpty { return }
            for object in pending {
                let address = ObjectSet.address(object)
                if before[address] == nil { held.append(object) }
                before[address] = object._values
                runHook(object) { $0.willSave() }
            }
        }
        let restless = (Array(inserted.values) + Array(updated.values)).filter { object in
            before[ObjectSet.address(object)].map { values in
                zip(values, object._values).contains { !$0.isIdentical(to: $1) }
            } ?? false
        }
        withExtendedLifetime(held) {}
        let names = restless.map { "\($0.objectID)" }.sorted().joined(separator: ", ")
        throw StrataError.misuse("willSave kept changing \(names) "
            + "for 16 rounds: a hook must stop changing values once they are set")
    }

    /// The objects of a change set in the order of their keys (entity, then primary key): the
    /// order the store keeps their rows, so a save's reads and writes walk its trees forward,
    /// and the change list it reports (which other contexts merge, and history keeps) comes
    /// out in that order, as do its hooks. A dictionary's order is random: every pass of a
    /// save over its objects, and of a merge over the rows, was a random walk through memory
    /// (decision 74).
    static func inKeyOrder(_ objects: [Key: ManagedObject]) -> [ManagedObject] {
        // Sorted as plain values (no reference counting while they move), counted once at the end.
        var entries: [(entity: Int, raw: Int64, object: Unmanaged<ManagedObject>)] = []
        entries.reserveCapacity(objects.count)
        for (key, object) in objects { entries.append((key.entity, key.raw, Unmanaged.passUnretained(object))) }
        entries.sort { lhs, rhs in lhs.entity != rhs.entity ? lhs.entity < rhs.entity : lhs.raw < rhs.raw }
        return entries.map { $0.object.takeUnretainedValue() }
    }

    /// Whether two values of a collection type are the very same storage (their bits match:
    /// one reference). Copy on write gives a changed collection new storage while a copy of
    /// the old one is kept, so this tells "untouched" in one comparison; equal contents in
    /// other storage answer false.
    static func sameStorage<C>(_ lhs: C, _ rhs: C) -> Bool {
        withUnsafeBytes(of: lhs) { lhsBytes in
            withUnsafeBytes(of: rhs) { rhsBytes in lhsBytes.elementsEqual(rhsBytes) }
        }
    }

    /// Whether `now` holds what `then` held. An array kept aside shares its buffer until the
    /// object's array is written (copy on write), so the same buffer answers at once; only a
    /// replaced array is compared value by value.
    static func unchanged(_ then: [StoredValue], _ now: [StoredValue]) -> Bool {
        guard then.count == now.count else { return false }
        let same = then.withUnsafeBufferPointer { thenBuffer in
            now.withUnsafeBufferPointer { nowBuffer in thenBuffer.baseAddress == nowBuffer.baseAddress }
        }
        return same || zip(then, now).allSatisfy { $0.isIdentical(to: $1) }
    }

    /// Runs the validation hooks of the objects a save writes (`ordered`: the updated and
    /// deleted ones in key order).
    private func validateChanges(_ ordered: (updated: [ManagedObject], deleted: [ManagedObject])) throws {
        var errors: [StrataError] = []
        func run(_ object: ManagedObject, _ body: () throws -> Void) {
            do { try body() } catch let error as StrataError { errors.append(error) } catch {
                errors.append(.invalidObject(entity: object.entityName, primaryKey: object.objectID.primaryKey,
                                             property: nil, reason: "\(error)"))
            }
        }
        var slots: [Int] = []
        for object in insertOrder.compactMap({ inserted[$0] }) + ordered.updated {
            // Every property changed since the last save, whether or not an event (a processed
            // change or a primitive set) reported it. A relationship's value is nil.
            let schema = object.entitySchema
            if schema.overridesValidateValue {
                object.changedSlots(into: &slots)
                for slot in slots {
                    // Read in place: `bridges[slot].map { … }` copied the bridge (two closures
                    // retained and released per changed value).
                    let value: Any? = schema.bridges[slot]?.toSwift(object._values[slot])
                    run(object) { try object.validateValue(value, forKey: schema.propertyNames[slot]) }
                }
            }
            run(object) { object.isInserted ? try object.validateForInsert() : try object.validateForUpdate() }
        }
        for object in ordered.deleted { run(object) { try object.validateForDelete() } }
        if errors.count == 1 { throw errors[0] }
        if !errors.isEmpty { throw StrataError.multipleErrors(errors) }
    }

    /// Makes a saved object's transient values its baseline: saved, they are no longer changes.
    func keepTransientValues(of object: ManagedObject) {
        let slots = object.entitySchema.transientSlots
        guard !slots.isEmpty, !object._values.isEmpty else { return }
        if object._snapshot.count != object._values.count { object._snapshot = object._values; return }
        // A snapshot sharing the values' buffer holds them already (and writing it would copy).
        if Self.unchanged(object._snapshot, object._values) { return }
        for slot in slots { object._snapshot[slot] = object._values[slot] }
    }

    private func finishSave(_ saving: (inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject]),
                            pks: KeyTable<Int64>, changes: RecordChanges,
                            storeWins: [(ManagedObject, [StoredValue]?)]) -> SaveNotification {
        // One pass per object (its binding looked up once): inserted objects take their
        // primary keys; to-one values naming temporary identifiers now name primary keys
        // (every insert of the save has its key by now); the changed sets' marks go.
        // `apply` knows the objects this save wrote by `.savedHere`, cleared below once it ran.
        // The inserted and updated objects are walked as two lists, not joined into one: the
        // joined copy cost an allocation and a retain and a release per saved object.
        let saved = [saving.inserted, saving.updated]
        for object in saving.inserted {
            object._flags.insert(.savedHere)
            clearChangeMarks(object)
            guard let binding = binding(object) else { continue }
            if let pk = pks[object._rawID] {
                undoRecorder?.renameIdentity(entity: binding.index, from: object._rawID, to: pk)
                registry.removeValue(forKey: key(object, binding))
                object._rawID = pk
                claimIdentity(object, key(object, binding))
                object._flags.remove(.inserted)
            }
            renameTemporaryTargets(object, binding)
        }
        for object in saving.updated {
            object._flags.insert(.savedHere)
            clearChangeMarks(object)
            object._flags.remove(.updated)
            if !permanentIDs.isEmpty, let binding = binding(object) { renameTemporaryTargets(object, binding) }
        }
        var deletedHere = ObjectSet(capacity: saving.deleted.count)
        for object in saving.deleted { deletedHere.insert(object) }
        inserted = [:]
        insertOrder = []
        updated = [:]
        deleted = [:]
        pendingLinks = []
        for (object, stored) in storeWins {
            guard let stored else {
                // Another save deleted its row: nothing to take back, so it turns into a fault.
                if let binding = binding(object) { markGone(object, key(object, binding)) }
                turnIntoFault(object)
                continue
            }
            object._values = stored
            object._snapshot = stored
            runHook(object) { $0.awake(fromSnapshotEvents: .mergePolicy) }
        }
        apply(changes, faultsLater: deletedHere)
        if !saving.deleted.isEmpty { settleWritesRulesChanged(saving, changes) }
        newestMergedTransactionID = max(newestMergedTransactionID, changes.transactionID)
        for objects in saved {
            for object in objects {
                object._flags.remove(.savedHere)
                keepTransientValues(of: object)
            }
        }
        for objects in saved {
            for object in objects { runHook(object) { $0.didSave() } }
        }
        for object in saving.deleted { runHook(object) { $0.didSave() } }
        // Their rows are gone: deleted objects turn into faults once told they were saved (as
        // Core Data's do), so didTurnIntoFault can release what they hold.
        for object in saving.deleted where !object.isFault { turnIntoFault(object) }
        postObjectsDidChange()
        let notification = SaveNotification(changes: changes, container: container)
        container.announce(notification, from: inbox)
        return notification
    }

    /// Rows this save wrote that its delete rules changed back are in no change list, so
    /// `apply` left their objects as they were written. An inserted object a cascade deleted
    /// in the same save (inserted into a list the save deletes) has no row: it is gone, as a
    /// deleted one. An object whose row the rules put back as it was (its to-one set to an
    /// object the same save deleted, then nullified) takes its row as stored. Only saves that
    /// delete can meet this; rows are read again only for objects still differing from their
    /// snapshots.
    private func settleWritesRulesChanged(_ saving: (inserted: [ManagedObject], updated: [ManagedObject],
                                                     deleted: [ManagedObject]), _ changes: RecordChanges) {
        let insertedRows = Set(changes.inserted.map(\.id))
        for object in saving.inserted where object._rawID > 0 && !object._flags.contains(.gone) {
            guard let id = object.objectID.recordID, !insertedRows.contains(id), let binding = binding(object) else {
                continue
            }
            changeBatch.depth += 1
            if !object.isFault { touchInversesOfToOnes(object) }
            markGone(object, key(object, binding))
            changeBatch.end()
            turnIntoFault(object)
        }
        let listed = Set(changes.updated.map(\.id))
        for object in saving.updated where !object.isFault && object._flags.isDisjoint(with: [.deleted, .gone]) {
            guard let id = object.objectID.recordID, !listed.contains(id), !object.changedSlots().isEmpty,
                  let binding = binding(object) else { continue }
            guard let row = try? reader().storedRow(of: id) else { continue }
            moveSnapshot(of: object, to: binding.values(fromRow: row), binding)
        }
    }

    /// A saved object's to-one values that name a temporary identifier name its primary key.
    private func renameTemporaryTargets(_ object: ManagedObject, _ binding: EntityBinding) {
        let kinds = binding.schema.slotKinds
        for slot in binding.lockedSlots where kinds[slot] == .toOne && slot < object._values.count {
            if case .int(let raw) = object._values[slot], raw < 0, let pk = permanentIDs[raw] {
                object._values[slot] = .int(pk)
            }
        }
    }

    /// A saved object's events and to-many change marks end with the save.
    private func clearChangeMarks(_ object: ManagedObject) {
        object.clearEvents()
        object._extras?.changedToMany = []
    }

    /// Brings registered objects up to a committed change set: snapshots move; objects without
    /// unsaved changes take the new values; changed ones keep their changes on top.
    /// Objects flagged `.savedHere` are the ones the save being finished wrote. Rows another
    /// save deleted (or this save's delete rules did) mark their objects deleted and turn them
    /// into faults, except `faultsLater` (turned by the caller).
    func apply(_ changes: RecordChanges, faultsLater: ObjectSet = ObjectSet()) {
        // One change: observers hear each property once, with its final value.
        changeBatch.depth += 1
        defer { changeBatch.end() }
        // Rows come in runs of one entity: its binding is looked up by name once per run.
        var lastName: String?
        var lastBinding: EntityBinding?
        func binding(named name: String) -> EntityBinding? {
            if lastName == name { return lastBinding }
            lastBinding = container.binding(named: name)
            lastName = name
            return lastBinding
        }
        // A key above Int64.max (a row the record layer wrote under a forged counter) names no
        // object, so none is registered for it.
        // Rows read in place (a copy of each retained and released its four references), the
        // registry asked before anything else is touched: most rows name no loaded object.
        func applyChanged(_ rows: [RecordChanges.Row]) {
            rows.withUnsafeBufferPointer { buffer in
                for i in buffer.indices {
                    guard let binding = binding(named: buffer[i].id.entity),
                          let raw = Int64(exactly: buffer[i].id.primaryKey),
                          let registered = registry[Key(entity: binding.index, raw: raw)] else { continue }
                    let object = registered.takeUnretainedValue()
                    guard !object.isFault, let values = buffer[i].values else { continue }
                    let own = object._flags.contains(.savedHere)
                    if own && adoptValuesAsSnapshot(object, row: values, binding) { continue }
                    moveSnapshot(of: object, to: binding.values(fromRow: values), binding)
                    if !own { runHook(object) { $0.awake(fromSnapshotEvents: .merge) } }
                }
            }
        }
        applyChanged(changes.inserted)
        applyChanged(changes.updated)
        for row in changes.deleted {
            guard let binding = binding(named: row.id.entity), let raw = Int64(exactly: row.id.primaryKey),
                  let registered = registry[Key(entity: binding.index, raw: raw)] else { continue }
            let object = registered.takeUnretainedValue()
            // Loaded, it names its to-one targets: their to-manys lose it (unless this
            // context's own delete told them already).
            if !object.isFault && !object._flags.contains(.deleted) { touchInversesOfToOnes(object) }
            markGone(object, Key(entity: binding.index, raw: raw))
            // The saving context's own deletions turn into faults after their didSave.
            if !object.isFault && !faultsLater.contains(object) { turnIntoFault(object) }
        }
    }

    /// The common end of a save for an object it wrote: the committed row holds exactly the
    /// object's values (every stored slot in the same representation, no derived value moved,
    /// nothing else in the row's slots). Then its values stay as they are and its snapshot
    /// becomes the same array, shared: what ``moveSnapshot(of:to:_:)`` would leave (the row's
    /// values, transients kept, nothing to tell observers), without a fresh array from the row
    /// and a second to compare. Returns false, changing nothing, when any slot differs (the
    /// caller then takes that general path).
    private func adoptValuesAsSnapshot(_ object: ManagedObject, row: [StoredValue], _ binding: EntityBinding) -> Bool {
        guard !object.hasChanges else { return false }
        let values = object._values
        let schema = binding.schema
        let kinds = schema.slotKinds
        guard values.count == kinds.count, binding.rowField.count == kinds.count else { return false }
        let same = values.withUnsafeBufferPointer { valueBuffer in
            row.withUnsafeBufferPointer { rowBuffer in
                for slot in 0..<valueBuffer.count {
                    let field = binding.rowField[slot]
                    if field >= 0 {
                        // The same bits are the same representation; else compare.
                        guard field < rowBuffer.count else { return false }
                        if memcmp(valueBuffer.baseAddress! + slot, rowBuffer.baseAddress! + field,
                                  MemoryLayout<StoredValue>.size) == 0 { continue }
                        guard Self.sameRepresentation(valueBuffer[slot], rowBuffer[field]) else { return false }
                    } else if kinds[slot] != .transient {
                        // Not in the row (a to-many): the snapshot would hold the initial value.
                        guard Self.sameRepresentation(valueBuffer[slot], schema.initialValues[slot]) else {
                            return false
                        }
                    }
                }
                return true
            }
        }
        guard same else { return false }
        object._snapshot = values
        return true
    }

    /// Whether two values are the same bits, not only identical in the sense of
    /// ``StoredValue/isIdentical(to:)``: `-0.0` and `0.0`, or `1.0` and `1.00` as decimals, are
    /// identical, but an object keeps the row's spelling when it takes the row's values, so
    /// only the same representation lets it keep its own. Decimals always answer false (their
    /// representation is not compared here): the general path handles them.
    static func sameRepresentation(_ lhs: StoredValue, _ rhs: StoredValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let left), .bool(let right)): return left == right
        case (.int(let left), .int(let right)): return left == right
        case (.double(let left), .double(let right)): return left.bitPattern == right.bitPattern
        case (.string, .string): return lhs.isIdentical(to: rhs)
        case (.date(let left), .date(let right)):
            return left.timeIntervalSinceReferenceDate.bitPattern == right.timeIntervalSinceReferenceDate.bitPattern
        case (.uuid(let left), .uuid(let right)): return left == right
        case (.binary(let left), .binary(let right)): return left == right
        default: return false
        }
    }
}
