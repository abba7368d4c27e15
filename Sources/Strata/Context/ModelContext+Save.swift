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
        guard hasChanges else { return nil }
        postObjectsDidChange()
        try runWillSave()
        try validateChanges()
        let saving = (inserted: insertOrder.compactMap { inserted[$0] }, updated: Array(updated.values), deleted: Array(deleted.values))
        if saving.inserted.isEmpty && saving.deleted.isEmpty && pendingLinks.isEmpty
            && !saving.updated.contains(where: { $0.hasPersistentChangedValues || $0._extras?.changedToMany.isEmpty == false }) {
            // Only transient attributes changed: nothing to write (no commit, no sync).
            updated = [:]
            for o in saving.updated {
                o._flags.remove(.updated)
                o.clearEvents()
                keepTransientValues(of: o)
            }
            for o in saving.updated { runHook(o) { $0.didSave() } }
            return nil
        }
        var conflicts: [MergeConflictRecord] = []
        var storeWins: [(ManagedObject, [StoredValue]?)] = []
        let (pks, changes) = try container.whileOpen("save") { try container.store.writeReportingChanges { tx -> ChangeWriter in
            var writer = ChangeWriter(context: self, tx: tx)
            tx.reserveRows(saving.inserted.count + saving.updated.count + saving.deleted.count)
            try writer.insert(saving.inserted)
            for o in saving.updated {
                guard let b = binding(o), let pk = writer.recordKey(o._rawID) else { continue }
                // The row as stored, compared slot by slot in place (stored slots all have a
                // row field); the object's form of it is made only where a policy needs it.
                let row = try tx.unsettledRow(entityIndex: b.index, primaryKey: UInt64(pk))
                var write = writer.changedSlots(o, b)
                let snapshot = o._snapshot
                var conflicting: [Int] = []
                if !snapshot.isEmpty {
                    if let row {
                        let initial = b.schema.initialValues
                        conflicting = row.withUnsafeBufferPointer { rp in
                            snapshot.withUnsafeBufferPointer { sp in
                                b.lockedSlots.filter { slot in
                                    let f = b.rowField[slot]
                                    guard f < rp.count, slot < sp.count else { return !initial[slot].isIdentical(to: snapshot[slot]) }
                                    return !StoredValue.identical(rp, f, sp, slot)
                                }
                            }
                        }
                    } else {
                        conflicting = b.lockedSlots
                    }
                }
                if row == nil || !conflicting.isEmpty {
                    let stored = row.map { b.values(fromRow: $0) }
                    switch mergePolicy {
                    case .error:
                        conflicts.append(conflictRecord(o, b, conflicting, stored))
                        continue
                    case .rollback:
                        storeWins.append((o, stored))
                        continue
                    case .overwrite:
                        write = b.lockedSlots
                    case .mergeByPropertyObjectTrump:
                        break
                    case .mergeByPropertyStoreTrump:
                        write.removeAll { conflicting.contains($0) }
                    }
                    if stored == nil { storeWins.append((o, nil)); continue }
                }
                try writer.update(o, b, slots: write)
            }
            try writer.writeLinks(pendingLinks)
            try writer.delete(saving.deleted)
            if !conflicts.isEmpty { throw StrataError.mergeConflicts(conflicts) }
            return writer
        } }
        statistics.saves += 1
        for (temp, pk) in pks.writtenOrder where temp < 0 { permanentIDs[temp] = pk }
        return finishSave(saving, pks: pks.written, changes: changes, storeWins: storeWins)
    }

    private func conflictRecord(_ o: ManagedObject, _ b: EntityBinding, _ slots: [Int], _ stored: [StoredValue]?) -> MergeConflictRecord {
        let names = slots.map { b.schema.properties[$0].name }
        func text(_ values: [StoredValue]) -> [String: String] {
            Dictionary(uniqueKeysWithValues: slots.map { (b.schema.properties[$0].name, values[$0].description) })
        }
        return MergeConflictRecord(entity: b.name, primaryKey: UInt64(max(o._rawID, 0)), properties: names, snapshot: text(o._snapshot),
                                   cached: text(o._values), persisted: stored.map(text))
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
    private func runWillSave() throws {
        let sets = (inserted, insertOrder, updated, deleted)
        var round: [ManagedObject] = []
        round.reserveCapacity(inserted.count + updated.count + deleted.count)
        for k in insertOrder { if let o = inserted[k] { round.append(o) } }
        round.append(contentsOf: updated.values)
        round.append(contentsOf: deleted.values)
        if round.isEmpty { return }
        var before: [[StoredValue]] = []
        before.reserveCapacity(round.count)
        for o in round {
            before.append(o._values)
            runHook(o) { $0.willSave() }
        }
        for r in 1..<16 {
            guard Self.sameStorage(sets.0, inserted), Self.sameStorage(sets.1, insertOrder), Self.sameStorage(sets.2, updated),
                  Self.sameStorage(sets.3, deleted) else {
                var table = KeyTable<[StoredValue]>(capacity: round.count)
                for (o, v) in zip(round, before) { table[ObjectSet.address(o)] = v }
                return try runWillSaveRounds(from: r, before: table, held: round)
            }
            let pending = round.indices.filter { !Self.unchanged(before[$0], round[$0]._values) }
            if pending.isEmpty { return }
            for i in pending {
                before[i] = round[i]._values
                runHook(round[i]) { $0.willSave() }
            }
        }
        var table = KeyTable<[StoredValue]>(capacity: round.count)
        for (o, v) in zip(round, before) { table[ObjectSet.address(o)] = v }
        try runWillSaveRounds(from: 16, before: table, held: round)
    }

    /// Rounds `first` to 15 of ``runWillSave()``, each over the objects the change sets hold
    /// then; `before` holds (by address) what each object held when its last `willSave` began,
    /// and `held` keeps those objects alive, so no address is reused by an object a hook makes.
    private func runWillSaveRounds(from first: Int, before: KeyTable<[StoredValue]>, held: [ManagedObject]) throws {
        var before = before
        var held = held
        for _ in first..<max(first, 16) {
            var all: [ManagedObject] = []
            for k in insertOrder { if let o = inserted[k] { all.append(o) } }
            all.append(contentsOf: updated.values)
            all.append(contentsOf: deleted.values)
            let pending = all.filter { o in
                guard let values = before[ObjectSet.address(o)] else { return true }
                return !Self.unchanged(values, o._values)
            }
            if pending.isEmpty { return }
            for o in pending {
                let a = ObjectSet.address(o)
                if before[a] == nil { held.append(o) }
                before[a] = o._values
                runHook(o) { $0.willSave() }
            }
        }
        let restless = (Array(inserted.values) + Array(updated.values)).filter { o in
            before[ObjectSet.address(o)].map { v in zip(v, o._values).contains { !$0.isIdentical(to: $1) } } ?? false
        }
        withExtendedLifetime(held) {}
        throw StrataError.misuse("willSave kept changing \(restless.map { "\($0.objectID)" }.sorted().joined(separator: ", ")) "
            + "for 16 rounds: a hook must stop changing values once they are set")
    }

    /// Whether two values of a collection type are the very same storage (their bits match:
    /// one reference). Copy on write gives a changed collection new storage while a copy of
    /// the old one is kept, so this tells "untouched" in one comparison; equal contents in
    /// other storage answer false.
    static func sameStorage<C>(_ a: C, _ b: C) -> Bool {
        withUnsafeBytes(of: a) { pa in withUnsafeBytes(of: b) { pb in pa.elementsEqual(pb) } }
    }

    /// Whether `now` holds what `then` held. An array kept aside shares its buffer until the
    /// object's array is written (copy on write), so the same buffer answers at once; only a
    /// replaced array is compared value by value.
    static func unchanged(_ then: [StoredValue], _ now: [StoredValue]) -> Bool {
        guard then.count == now.count else { return false }
        let same = then.withUnsafeBufferPointer { a in now.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
        return same || zip(then, now).allSatisfy { $0.isIdentical(to: $1) }
    }

    private func validateChanges() throws {
        var errors: [StrataError] = []
        func run(_ o: ManagedObject, _ body: () throws -> Void) {
            do { try body() } catch let e as StrataError { errors.append(e) } catch {
                errors.append(.invalidObject(entity: o.entityName, primaryKey: o.objectID.primaryKey, property: nil, reason: "\(error)"))
            }
        }
        var slots: [Int] = []
        for o in insertOrder.compactMap({ inserted[$0] }) + Array(updated.values) {
            // Every property changed since the last save, whether or not an event (a processed
            // change or a primitive set) reported it. A relationship's value is nil.
            let schema = o.entitySchema
            o.changedSlots(into: &slots)
            for slot in slots {
                // Read in place: `bridges[slot].map { … }` copied the bridge (two closures
                // retained and released per changed value).
                let v: Any? = schema.bridges[slot]?.toSwift(o._values[slot])
                run(o) { try o.validateValue(v, forKey: schema.propertyNames[slot]) }
            }
            run(o) { o.isInserted ? try o.validateForInsert() : try o.validateForUpdate() }
        }
        for o in deleted.values { run(o) { try o.validateForDelete() } }
        if errors.count == 1 { throw errors[0] }
        if !errors.isEmpty { throw StrataError.multipleErrors(errors) }
    }

    /// Makes a saved object's transient values its baseline: saved, they are no longer changes.
    func keepTransientValues(of o: ManagedObject) {
        let slots = o.entitySchema.transientSlots
        guard !slots.isEmpty, !o._values.isEmpty else { return }
        if o._snapshot.count != o._values.count { o._snapshot = o._values; return }
        // A snapshot sharing the values' buffer holds them already (and writing it would copy).
        if Self.unchanged(o._snapshot, o._values) { return }
        for slot in slots { o._snapshot[slot] = o._values[slot] }
    }

    func bridge(_ p: EntitySchema.Property) -> ValueBridge? {
        switch p.kind {
        case .attribute(let a): return a.bridge
        case .derived(let d): return d.bridge
        default: return nil
        }
    }

    private func finishSave(_ saving: (inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject]),
                            pks: KeyTable<Int64>, changes: RecordChanges, storeWins: [(ManagedObject, [StoredValue]?)]) -> SaveNotification {
        // One pass per object (its binding looked up once): inserted objects take their
        // primary keys; to-one values naming temporary identifiers now name primary keys
        // (every insert of the save has its key by now); the changed sets' marks go.
        let saved = saving.inserted + saving.updated
        var wasChanged = ObjectSet(capacity: saved.count)
        for o in saving.inserted {
            wasChanged.insert(o)
            clearChangeMarks(o)
            guard let b = binding(o) else { continue }
            if let pk = pks[o._rawID] {
                registry.removeValue(forKey: key(o, b))
                o._rawID = pk
                claimIdentity(o, key(o, b))
                o._flags.remove(.inserted)
            }
            renameTemporaryTargets(o, b)
        }
        for o in saving.updated {
            wasChanged.insert(o)
            clearChangeMarks(o)
            o._flags.remove(.updated)
            if let b = binding(o) { renameTemporaryTargets(o, b) }
        }
        var deletedHere = ObjectSet(capacity: saving.deleted.count)
        for o in saving.deleted { deletedHere.insert(o) }
        inserted = [:]
        insertOrder = []
        updated = [:]
        deleted = [:]
        pendingLinks = []
        for (o, stored) in storeWins {
            guard let stored else {
                // Another save deleted its row: nothing to take back, so it turns into a fault.
                if let b = binding(o) { markGone(o, key(o, b)) }
                turnIntoFault(o)
                continue
            }
            o._values = stored
            o._snapshot = stored
            runHook(o) { $0.awake(fromSnapshotEvents: .mergePolicy) }
        }
        apply(changes, ownSave: wasChanged, faultsLater: deletedHere)
        newestMergedTransactionID = max(newestMergedTransactionID, changes.transactionID)
        for o in saved { keepTransientValues(of: o) }
        for o in saved { runHook(o) { $0.didSave() } }
        for o in saving.deleted { runHook(o) { $0.didSave() } }
        // Their rows are gone: deleted objects turn into faults once told they were saved (as
        // Core Data's do), so didTurnIntoFault can release what they hold.
        for o in saving.deleted where !o.isFault { turnIntoFault(o) }
        postObjectsDidChange()
        let notification = SaveNotification(changes: changes, container: container)
        container.announce(notification, from: inbox)
        return notification
    }

    /// A saved object's to-one values that name a temporary identifier name its primary key.
    private func renameTemporaryTargets(_ o: ManagedObject, _ b: EntityBinding) {
        let kinds = b.schema.slotKinds
        for slot in b.lockedSlots where kinds[slot] == .toOne && slot < o._values.count {
            if case .int(let raw) = o._values[slot], raw < 0, let pk = permanentIDs[raw] {
                o._values[slot] = .int(pk)
            }
        }
    }

    /// A saved object's events and to-many change marks end with the save.
    private func clearChangeMarks(_ o: ManagedObject) {
        o.clearEvents()
        o._extras?.changedToMany = []
    }

    /// Brings registered objects up to a committed change set: snapshots move; objects without
    /// unsaved changes take the new values; changed ones keep their changes on top.
    /// Rows another save deleted (or this save's delete rules did) mark their objects deleted
    /// and turn them into faults, except `faultsLater` (turned by the caller).
    func apply(_ changes: RecordChanges, ownSave: ObjectSet = ObjectSet(), faultsLater: ObjectSet = ObjectSet()) {
        // One change: observers hear each property once, with its final value.
        changeBatch.depth += 1
        defer { changeBatch.end() }
        // Rows come in runs of one entity: its binding is looked up by name once per run.
        var last: (name: String, binding: EntityBinding?)?
        func binding(named name: String) -> EntityBinding? {
            if let last, last.name == name { return last.binding }
            let b = container.binding(named: name)
            last = (name, b)
            return b
        }
        // A key above Int64.max (a row the record layer wrote under a forged counter) names no
        // object, so none is registered for it.
        for rows in [changes.inserted, changes.updated] {
            for row in rows {
                guard let b = binding(named: row.id.entity), let values = row.values, let raw = Int64(exactly: row.id.primaryKey),
                      let u = registry[Key(entity: b.index, raw: raw)] else { continue }
                let o = u.takeUnretainedValue()
                if o.isFault { continue }
                let own = ownSave.contains(o)
                if own && adoptValuesAsSnapshot(o, row: values, b) { continue }
                moveSnapshot(of: o, to: b.values(fromRow: values), b)
                if !own { runHook(o) { $0.awake(fromSnapshotEvents: .merge) } }
            }
        }
        for row in changes.deleted {
            guard let b = binding(named: row.id.entity), let raw = Int64(exactly: row.id.primaryKey),
                  let u = registry[Key(entity: b.index, raw: raw)] else { continue }
            let o = u.takeUnretainedValue()
            // Loaded, it names its to-one targets: their to-manys lose it (unless this
            // context's own delete told them already).
            if !o.isFault && !o._flags.contains(.deleted) { touchInversesOfToOnes(o) }
            markGone(o, Key(entity: b.index, raw: raw))
            // The saving context's own deletions turn into faults after their didSave.
            if !o.isFault && !faultsLater.contains(o) { turnIntoFault(o) }
        }
    }

    /// The common end of a save for an object it wrote: the committed row holds exactly the
    /// object's values (every stored slot in the same representation, no derived value moved,
    /// nothing else in the row's slots). Then its values stay as they are and its snapshot
    /// becomes the same array, shared: what ``moveSnapshot(of:to:_:)`` would leave (the row's
    /// values, transients kept, nothing to tell observers), without a fresh array from the row
    /// and a second to compare. Returns false, changing nothing, when any slot differs (the
    /// caller then takes that general path).
    private func adoptValuesAsSnapshot(_ o: ManagedObject, row: [StoredValue], _ b: EntityBinding) -> Bool {
        guard !o.hasChanges else { return false }
        let values = o._values
        let schema = b.schema
        let kinds = schema.slotKinds
        guard values.count == kinds.count, b.rowField.count == kinds.count else { return false }
        let same = values.withUnsafeBufferPointer { vp in
            row.withUnsafeBufferPointer { rp in
                for slot in 0..<vp.count {
                    let f = b.rowField[slot]
                    if f >= 0 {
                        // The same bits are the same representation; else compare.
                        guard f < rp.count else { return false }
                        if memcmp(vp.baseAddress! + slot, rp.baseAddress! + f, MemoryLayout<StoredValue>.size) == 0 { continue }
                        guard Self.sameRepresentation(vp[slot], rp[f]) else { return false }
                    } else if kinds[slot] != .transient {
                        // Not in the row (a to-many): the snapshot would hold the initial value.
                        guard Self.sameRepresentation(vp[slot], schema.initialValues[slot]) else { return false }
                    }
                }
                return true
            }
        }
        guard same else { return false }
        o._snapshot = values
        return true
    }

    /// Whether two values are the same bits, not only identical in the sense of
    /// ``StoredValue/isIdentical(to:)``: `-0.0` and `0.0`, or `1.0` and `1.00` as decimals, are
    /// identical, but an object keeps the row's spelling when it takes the row's values, so
    /// only the same representation lets it keep its own. Decimals always answer false (their
    /// representation is not compared here): the general path handles them.
    static func sameRepresentation(_ a: StoredValue, _ b: StoredValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
        case (.string, .string): return a.isIdentical(to: b)
        case (.date(let x), .date(let y)):
            return x.timeIntervalSinceReferenceDate.bitPattern == y.timeIntervalSinceReferenceDate.bitPattern
        case (.uuid(let x), .uuid(let y)): return x == y
        case (.binary(let x), .binary(let y)): return x == y
        default: return false
        }
    }
}
