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
                o._extras?.clearEvents()
                keepTransientValues(of: o)
            }
            for o in saving.updated { runHook(o) { $0.didSave() } }
            return nil
        }
        var conflicts: [MergeConflictRecord] = []
        var storeWins: [(ManagedObject, [Value]?)] = []
        let (pks, changes) = try container.whileOpen("save") { try container.store.writeReportingChanges { tx -> [Int64: Int64] in
            var writer = ChangeWriter(context: self, tx: tx)
            try writer.insert(saving.inserted)
            for o in saving.updated {
                guard let b = binding(o), let id = writer.recordID(o._rawID, b) else { continue }
                let stored = try tx.storedRow(of: id).map { b.values(fromRow: $0) }
                var write = writer.changedSlots(o, b)
                let conflicting = o._snapshot.isEmpty ? [] : b.lockedSlots.filter { slot in
                    stored.map { s in !s[slot].isIdentical(to: o._snapshot[slot]) } ?? true
                }
                if stored == nil || !conflicting.isEmpty {
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
            return writer.primaryKeys
        } }
        statistics.saves += 1
        for (temp, pk) in pks where temp < 0 { permanentIDs[temp] = pk }
        return finishSave(saving, pks: pks, changes: changes, storeWins: storeWins)
    }

    private func conflictRecord(_ o: ManagedObject, _ b: EntityBinding, _ slots: [Int], _ stored: [Value]?) -> MergeConflictRecord {
        let names = slots.map { b.schema.properties[$0].name }
        func text(_ values: [Value]) -> [String: String] {
            Dictionary(uniqueKeysWithValues: slots.map { (b.schema.properties[$0].name, values[$0].description) })
        }
        return MergeConflictRecord(entity: b.name, primaryKey: UInt64(max(o._rawID, 0)), properties: names, snapshot: text(o._snapshot),
                                   cached: text(o._values), persisted: stored.map(text))
    }

    /// `willSave` on every changed object, then again on each object whose values changed
    /// since its last `willSave` began (by its own hook or another's), until none changes: at
    /// most 16 rounds, then the save fails (`misuse`), as a hook that never settles would
    /// otherwise loop forever (Core Data's documented trap).
    private func runWillSave() throws {
        var before: [ObjectIdentifier: [Value]] = [:]
        for _ in 0..<16 {
            let pending = (insertOrder.compactMap { inserted[$0] } + Array(updated.values) + Array(deleted.values)).filter { o in
                guard let values = before[ObjectIdentifier(o)] else { return true }
                return values.count != o._values.count || zip(values, o._values).contains { !$0.isIdentical(to: $1) }
            }
            if pending.isEmpty { return }
            for o in pending {
                before[ObjectIdentifier(o)] = o._values
                runHook(o) { $0.willSave() }
            }
        }
        let restless = (Array(inserted.values) + Array(updated.values)).filter { o in
            before[ObjectIdentifier(o)].map { v in zip(v, o._values).contains { !$0.isIdentical(to: $1) } } ?? false
        }
        throw StrataError.misuse("willSave kept changing \(restless.map { "\($0.objectID)" }.sorted().joined(separator: ", ")) "
            + "for 16 rounds: a hook must stop changing values once they are set")
    }

    private func validateChanges() throws {
        var errors: [StrataError] = []
        func run(_ o: ManagedObject, _ body: () throws -> Void) {
            do { try body() } catch let e as StrataError { errors.append(e) } catch {
                errors.append(.invalidObject(entity: o.entityName, primaryKey: o.objectID.primaryKey, property: nil, reason: "\(error)"))
            }
        }
        for o in insertOrder.compactMap({ inserted[$0] }) + Array(updated.values) {
            // Every property changed since the last save, whether or not an event (a processed
            // change or a primitive set) reported it.
            for slot in o.changedSlots() {
                let p = o.entitySchema.properties[slot]
                let v: Any? = p.isRelationship ? nil : bridge(p).map { $0.toSwift(o._values[slot]) }
                run(o) { try o.validateValue(v, forKey: p.name) }
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
                            pks: [Int64: Int64], changes: RecordChanges, storeWins: [(ManagedObject, [Value]?)]) -> SaveNotification {
        for o in saving.inserted {
            guard let b = binding(o), let pk = pks[o._rawID] else { continue }
            registry.removeValue(forKey: key(o, b))
            o._rawID = pk
            claimIdentity(o, key(o, b))
            o._flags.remove(.inserted)
        }
        // To-one values naming temporary identifiers now name primary keys.
        for o in saving.inserted + saving.updated {
            guard let b = binding(o) else { continue }
            for slot in b.lockedSlots where slot < o._values.count {
                if case .toOne = b.schema.properties[slot].kind, case .int(let raw) = o._values[slot], raw < 0, let pk = permanentIDs[raw] {
                    o._values[slot] = .int(pk)
                }
            }
        }
        for o in saving.updated { o._flags.remove(.updated) }
        let wasChanged = Set((saving.inserted + saving.updated).map(ObjectIdentifier.init))
        inserted = [:]
        insertOrder = []
        updated = [:]
        deleted = [:]
        pendingLinks = []
        for o in saving.inserted + saving.updated { o._extras?.clearEvents(); o._extras?.changedToMany = [] }
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
        apply(changes, ownSave: wasChanged, faultsLater: Set(saving.deleted.map(ObjectIdentifier.init)))
        for o in saving.inserted + saving.updated { keepTransientValues(of: o) }
        for o in saving.inserted + saving.updated + saving.deleted { runHook(o) { $0.didSave() } }
        // Their rows are gone: deleted objects turn into faults once told they were saved (as
        // Core Data's do), so didTurnIntoFault can release what they hold.
        for o in saving.deleted where !o.isFault { turnIntoFault(o) }
        postObjectsDidChange()
        let notification = SaveNotification(changes: changes, container: container)
        container.announce(notification, from: inbox)
        return notification
    }

    /// Brings registered objects up to a committed change set: snapshots move; objects without
    /// unsaved changes take the new values; changed ones keep their changes on top.
    /// Rows another save deleted (or this save's delete rules did) mark their objects deleted
    /// and turn them into faults, except `faultsLater` (turned by the caller).
    func apply(_ changes: RecordChanges, ownSave: Set<ObjectIdentifier> = [], faultsLater: Set<ObjectIdentifier> = []) {
        // One change: observers hear each property once, with its final value.
        changeBatch.depth += 1
        defer { changeBatch.end() }
        // A key above Int64.max (a row the record layer wrote under a forged counter) names no
        // object, so none is registered for it.
        for row in changes.inserted + changes.updated {
            guard let b = container.binding(named: row.id.entity), let values = row.values, let raw = Int64(exactly: row.id.primaryKey),
                  let u = registry[Key(entity: b.index, raw: raw)] else { continue }
            let o = u.takeUnretainedValue()
            if o.isFault { continue }
            moveSnapshot(of: o, to: b.values(fromRow: values), b)
            if !ownSave.contains(ObjectIdentifier(o)) { runHook(o) { $0.awake(fromSnapshotEvents: .merge) } }
        }
        for row in changes.deleted {
            guard let b = container.binding(named: row.id.entity), let raw = Int64(exactly: row.id.primaryKey),
                  let u = registry[Key(entity: b.index, raw: raw)] else { continue }
            let o = u.takeUnretainedValue()
            markGone(o, Key(entity: b.index, raw: raw))
            // The saving context's own deletions turn into faults after their didSave.
            if !o.isFault && !faultsLater.contains(ObjectIdentifier(o)) { turnIntoFault(o) }
        }
    }
}
