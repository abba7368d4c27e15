import StrataRecords
import StrataStorage

extension ModelContext {
    /// Whether saves of other contexts of the container are merged into this one
    /// automatically: they are taken in at this context's next fetch, save, lookup or
    /// ``processPendingChanges()`` (in its own isolation domain), refreshing unchanged objects
    /// and re-applying local changes on top of changed ones.
    public var automaticallyMergesChangesFromStore: Bool {
        get { mergesAutomatically }
        set {
            mergesAutomatically = newValue
            updateMergeAttachment()
        }
    }

    /// Other contexts' saves come to the inbox when the context merges automatically, and
    /// while a change sequence of it lives (its objects must show what the sequence yields for).
    func updateMergeAttachment() {
        if mergesAutomatically || liveChangeSequences > 0 { container.attach(inbox) } else { container.detach(inbox) }
    }

    /// Merges another context's save: registered objects take the saved values (derived ones
    /// included); objects with unsaved changes keep them on top; objects whose rows it deleted
    /// are marked deleted, drop their changes and turn into faults (objects-did-change lists
    /// them as deleted). A save of another container's store is not merged (its primary keys
    /// name other rows): it is recorded as misuse, which the next ``save()`` throws.
    public func mergeChanges(from notification: SaveNotification) {
        guard notification.containerSerial == container.serial else {
            misuse.append(.misuse("a save of another container (transaction \(notification.transactionID)) "
                + "cannot be merged: its identifiers name rows of another store"))
            return
        }
        // To-many members are read from the store when accessed: no cache to move for links.
        take(notification)
        postObjectsDidChange()
    }

    /// Merges one announced commit: a save of this process, or another process's commit.
    private func take(_ notification: SaveNotification) {
        if notification.changesAreUnknown {
            refreshEveryObject()
        } else {
            merge(notification.changes, rereading: notification.isFromAnotherProcess)
        }
    }

    /// Ends the current event: takes in the saves waiting for an automatically merging
    /// context, tells objects-did-change observers, and closes the event's undo step
    /// (``undoStack``, unless a group is open).
    public func processPendingChanges() {
        closeUndoStep()
        processPendingMerges()
        postObjectsDidChange()
        for object in registry.objects { object.clearEvents() }
    }

    func processPendingMerges() {
        if container.isShared { container.deliverOtherProcessCommits() }
        // In commit order: each saving thread posts its save after committing it, so two saves
        // committed close together can arrive in the other order.
        let posted = inbox.take()
        guard !posted.isEmpty else { return }   // every fetch and save asks: mostly nothing
        let saves = posted.sorted { $0.transactionID < $1.transactionID }
        for notification in saves { take(notification) }
        postObjectsDidChange()
    }

    /// Applies another context's save. One older than a commit this context already took in
    /// (its own save, or a merged one: it arrived late) carries values that commit replaced, so
    /// its rows' values are read again from the store: an object must never go back to an older
    /// state (a list's derived count went from 40 back to 30 when two concurrent saves were
    /// posted in the other order than they committed).
    /// With `rereading`, the rows are read from the store whatever the transaction's age (a
    /// history transaction lists only what changed, not whole rows).
    func merge(_ changes: RecordChanges, rereading: Bool = false) {
        defer { newestMergedTransactionID = max(newestMergedTransactionID, changes.transactionID) }
        guard rereading || changes.transactionID <= newestMergedTransactionID else { return apply(changes) }
        var current = changes
        // The newest commit, even for a context pinned to an older generation: the values must
        // not be older than those it already took in.
        var latest: RecordSnapshot?
        defer { latest?.close() }
        do {
            let recordReader: RecordReader
            if pinned {
                try container.requireOpen("reading the store")
                let snapshot = try container.store.snapshot()
                latest = snapshot
                recordReader = snapshot.reader
            } else {
                recordReader = try reader()
            }
            for rows in [\RecordChanges.inserted, \RecordChanges.updated] {
                for i in current[keyPath: rows].indices {
                    let id = current[keyPath: rows][i].id
                    guard let binding = container.binding(named: id.entity) else { continue }
                    current[keyPath: rows][i].values = try recordReader.storedRow(entityIndex: binding.index,
                                                                                  primaryKey: id.primaryKey)
                }
            }
        } catch {
            // The store cannot be read: the objects keep what they have rather than go back.
            current.inserted = []
            current.updated = []
        }
        apply(current)
    }

    /// Drops every unsaved change: updated and deleted objects take their snapshots back,
    /// inserted objects leave the context. The ``undoStack``'s steps are dropped too.
    public func rollback() {
        // One change: observers hear each property once, with its final value.
        changeBatch.depth += 1
        for object in Array(updated.values) + Array(deleted.values) {
            // An undeleted object rejoins its to-one targets' to-manys.
            if object._flags.contains(.deleted) && !object.isFault { touchInversesOfToOnes(object) }
            object._flags.subtract([.updated, .deleted])
            if object._snapshot.isEmpty {
                turnIntoFault(object)
            } else {
                var values = object._snapshot
                for slot in object.entitySchema.transientSlots {
                    values[slot] = object.entitySchema.initialValues[slot]
                }
                ChangeBatch.replace(values, of: object, in: changeBatch)
                resetTransientValues(of: object)
            }
            object.clearEvents()
            object._extras?.changedToMany = []
            runHook(object) { $0.awake(fromSnapshotEvents: .rollback) }
        }
        for object in inserted.values {
            // Its to-one targets' to-manys lose it.
            touchInversesOfToOnes(object)
            if let binding = binding(object) { registry.removeValue(forKey: key(object, binding)) }
            object._flags = object._flags.intersection([.observedAccess, .eventSlots])
            object._context = nil
        }
        inserted = [:]
        insertOrder = []
        updated = [:]
        deleted = [:]
        pendingLinks = []
        misuse = []
        undoRecorder?.removeAllActions()
        // Told once the context holds no unsaved change: computed values read the saved state.
        changeBatch.end()
        postObjectsDidChange()
    }

    /// Forgets every object: registered objects leave the context (they keep the values they
    /// hold but belong to no context), unsaved changes and the ``undoStack``'s steps are dropped.
    public func reset() {
        rollback()
        for object in registry.objects {
            object._flags.remove(.registered)
            object._context = nil
        }
        registry.removeAll()
        permanentIDs = [:]
        faultBatches = [:]
        rowCache.removeAll()
        prefetchedRows = [:]
        reading?.close()
        reading = nil
    }

    /// Refreshes an object from the store. With `mergeChanges` false, its unsaved changes are
    /// dropped and it turns into a fault; with `true`, it takes the store's values and keeps
    /// its changes on top. An inserted object, a fault without changes and an object whose row
    /// is gone are left as they are.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        guard object.context === self, !object.isInserted, let binding = binding(object) else { return }
        // A fault holds nothing to drop or refresh (a deleted one keeps its deletion; one whose
        // row is gone stays as it is): no hooks run.
        if object.isFault && (!object.hasChanges || object._flags.contains(.gone)) { return }
        let objectKey = key(object, binding)
        // An unchanged object becomes a fault, unless a transient holds a value the fault
        // would lose: then it reads its row now.
        let keepsTransients = mergeChanges && !object.isFault && binding.schema.transientSlots.contains { slot in
            slot < object._values.count && !object._values[slot].isIdentical(to: binding.schema.initialValues[slot])
        }
        if !mergeChanges || !object.hasChanges && !keepsTransients {
            updated.removeValue(forKey: objectKey)
            deleted.removeValue(forKey: objectKey)
            object._flags.subtract([.updated, .deleted])
            object.clearEvents()
            object._extras?.changedToMany = []
            pendingLinks.removeAll { $0.owner === object || $0.member === object }
            turnIntoFault(object)
            return
        }
        guard let id = object.objectID.recordID else { return }
        let read: [StoredValue]?
        do { read = try reader().storedRow(of: id) } catch { return }
        guard let row = read else {
            // Another save deleted it: its changes have nothing left to apply to, and it turns
            // into a fault as every object whose row is gone does.
            markGone(object, objectKey)
            turnIntoFault(object)
            return
        }
        moveSnapshot(of: object, to: binding.values(fromRow: row), binding)
        runHook(object) { $0.awake(fromSnapshotEvents: .refresh) }
    }

    /// Refreshes every registered object, keeping unsaved changes (``refresh(_:mergeChanges:)``
    /// with `true`).
    public func refreshAllObjects() {
        processPendingMerges()
        refreshEveryObject()
    }

    /// ``refreshAllObjects()`` without taking pending merges in first.
    func refreshEveryObject() {
        reading?.close()
        reading = nil
        changeBatch.depth += 1
        defer { changeBatch.end() }
        for object in registry.objects {
            if !object.isFault {
                resetTransientValues(of: object, telling: true)
                // An object changed only in its transients has nothing left to keep.
                if object._flags.contains(.updated), object.changedSlots().isEmpty,
                   object._extras?.changedToMany.isEmpty ?? true, let binding = binding(object) {
                    object._flags.remove(.updated)
                    updated.removeValue(forKey: key(object, binding))
                    object._flags.subtract(.eventSlots)
                    object._extras?.eventChanges = []
                }
            }
            refresh(object, mergeChanges: true)
        }
    }

    /// Puts the object's transient attributes back to their defaults (values and baseline);
    /// `telling`: as a change observers hear (callers that replace or fault the values tell
    /// themselves).
    func resetTransientValues(of object: ManagedObject, telling: Bool = false) {
        let schema = object.entitySchema
        if telling, object._values.count == schema.initialValues.count {
            var values = object._values
            for slot in schema.transientSlots { values[slot] = schema.initialValues[slot] }
            ChangeBatch.replace(values, of: object, in: changeBatch)
        }
        for slot in schema.transientSlots {
            if slot < object._values.count { object._values[slot] = schema.initialValues[slot] }
            if slot < object._snapshot.count { object._snapshot[slot] = schema.initialValues[slot] }
        }
    }

    /// Gives `object` the store's `fresh` values as its snapshot: an object without unsaved
    /// changes takes them as its values; a changed one keeps its changed stored properties on
    /// top (derived values always come from the store).
    func moveSnapshot(of object: ManagedObject, to fresh: [StoredValue], _ binding: EntityBinding) {
        var snapshot = fresh
        if object._values.count == fresh.count {
            var values = fresh
            if object.hasChanges {
                let kinds = binding.schema.slotKinds
                for slot in values.indices where kinds[slot] != .derived
                    && (object._snapshot.isEmpty || !object._values[slot].isIdentical(to: object._snapshot[slot])) {
                    values[slot] = object._values[slot]
                }
            }
            // Transients are never in a row: they keep their values.
            for slot in binding.schema.transientSlots { values[slot] = object._values[slot] }
            ChangeBatch.replace(values, of: object, in: changeBatch)
        } else {
            object._values = fresh
        }
        // The transients' baseline stays what it was (it only moves when this context saves).
        for slot in binding.schema.transientSlots {
            snapshot[slot] = object._snapshot.count == fresh.count ? object._snapshot[slot] : object._values[slot]
        }
        object._snapshot = snapshot
    }

    /// Registers `object` under the primary key it was just given. A fault registered there
    /// already (made by `object(with:)` for a key no row had yet) leaves the context: one object
    /// per identity, and that fault never named a stored object.
    func claimIdentity(_ object: ManagedObject, _ key: Key) {
        if let registered = registry[key], registered.toOpaque() != Unmanaged.passUnretained(object).toOpaque() {
            let stale = registered.takeUnretainedValue()
            stale._flags.remove(.registered)
            stale._context = nil
        }
        registry[key] = Unmanaged.passUnretained(object)
    }

    /// The to-manys that list `object` through its to-ones (registered targets) are touched:
    /// `object` joins or leaves them as a whole (an insert rolled back, a delete, a row
    /// another save deleted), so their caches drop and their observers, Swift Observation
    /// included, hear it. Call inside a change (`changeBatch.depth` above zero).
    func touchInversesOfToOnes(_ object: ManagedObject) {
        let kinds = object.entitySchema.slotKinds
        for slot in kinds.indices where kinds[slot] == .toOne && slot < object._values.count {
            changeBatch.touchInverse(of: object, slot: slot, targets: object._values[slot])
        }
    }

    /// Records that another save deleted `object`'s row: it leaves the changed sets and reads
    /// as deleted.
    func markGone(_ object: ManagedObject, _ key: Key) {
        // News for objects-did-change, unless this context deleted it (told then).
        if hasChangeObservers && !object._flags.contains(.deleted) && !object._flags.contains(.gone) {
            pendingChange.updatedObjects.remove(object)
            pendingChange.changedKeys[object] = nil
            pendingChange.deletedObjects.insert(object)
        }
        object._flags.insert(.gone)
        object._flags.remove(.updated)
        updated.removeValue(forKey: key)
        deleted.removeValue(forKey: key)
        pendingLinks.removeAll { $0.owner === object || $0.member === object }
    }

    func turnIntoFault(_ object: ManagedObject) {
        runHook(object) { $0.willTurnIntoFault() }
        // Observers are told (their new values read the row again, when asked); Swift
        // Observation hears of every property of a loaded object. An object whose row is gone
        // has no new values to tell (reading them would fire a fault that cannot be
        // fulfilled): its deletion is what objects-did-change tells.
        let gone = object._flags.contains(.gone)
        let watched = !gone && (object._extras.map { !$0.observers.isEmpty || !$0.cache.isEmpty } ?? false)
        let loaded = !object._values.isEmpty
        if watched || loaded { changeBatch.depth += 1 }
        if watched, let extras = object._extras {
            for name in Set(extras.observers.map(\.key)).union(extras.cache.keys).sorted() {
                changeBatch.touch(object, name)
            }
        }
        if loaded {
            let schema = object.entitySchema
            for (slot, property) in schema.properties.enumerated() {
                if !gone { changeBatch.touch(object, property.name) }
                // The store's target (the snapshot's) takes the object back from an unsaved one.
                if property.isToOne, slot < object._snapshot.count,
                   !object._values[slot].isIdentical(to: object._snapshot[slot]) {
                    changeBatch.touchInverse(of: object, slot: slot, targets: object._values[slot],
                                             object._snapshot[slot])
                }
            }
        }
        object._values = []
        object._snapshot = []
        object._extras?.faultError = nil
        object._extras?.storeMembers = [:]
        object._extras?.cache = [:]
        object._flags.insert(.fault)
        if watched || loaded { changeBatch.end() }
        runHook(object) { $0.didTurnIntoFault() }
    }

    /// Pins the context to the store's current commit: faults and fetches read that snapshot
    /// until ``save()`` or ``unpinQueryGeneration()`` (a consistent view while others save).
    public func pinQueryGeneration() throws {
        pinned = false
        _ = try reader()
        pinned = true
    }

    /// Reads the latest commit again.
    public func unpinQueryGeneration() { pinned = false }

    /// The id of the commit the context reads when pinned (nil when not pinned).
    public var queryGeneration: UInt64? { pinned ? reading?.transactionID : nil }

    /// Gives inserted objects their permanent identifiers now, before they are saved: the
    /// store reserves their primary keys in a transaction of its own (nothing else is written),
    /// and the save inserts them under those keys. Objects holding the temporary identifiers,
    /// and lookups by them, keep working. Objects already saved or permanent are left alone.
    ///
    /// Throws `misuse` for an object of another context or a closed container, and the store's
    /// write errors (then no identifier changed).
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws {
        for object in objects { try checkOwn(object) }
        try container.requireOpen("obtainPermanentIDs")
        var wanting: [Int: [ManagedObject]] = [:]
        var seen = Set<ObjectIdentifier>()
        for object in objects
        where object.isInserted && object._rawID < 0 && seen.insert(ObjectIdentifier(object)).inserted {
            guard let binding = binding(object) else { continue }
            wanting[binding.index, default: []].append(object)
        }
        guard !wanting.isEmpty else { return }
        let groups = wanting.sorted { $0.key < $1.key }
        let keys = try container.whileOpen("obtainPermanentIDs") { try container.store.write { tx in
            try groups.map { index, group in
                let name = container.bindings[index].name
                return try tx.reservePrimaryKeys(name, count: group.count).map {
                    try ChangeWriter.identity($0, of: name)
                }
            }
        } }
        var renamed: [Key: Int64] = [:]
        for ((index, group), pks) in zip(groups, keys) {
            for (object, pk) in zip(group, pks) {
                let binding = container.bindings[index]
                let old = key(object, binding)
                object._rawID = pk
                let new = key(object, binding)
                registry.removeValue(forKey: old)
                claimIdentity(object, new)
                inserted.removeValue(forKey: old)
                inserted[new] = object
                if let at = insertOrder.firstIndex(of: old) { insertOrder[at] = new }
                permanentIDs[old.raw] = pk
                renamed[old] = pk
            }
        }
        // To-ones naming the temporary identifiers now name the primary keys.
        for object in Array(inserted.values) + Array(updated.values) {
            guard let binding = binding(object) else { continue }
            for slot in binding.lockedSlots where slot < object._values.count {
                guard case .toOne = binding.schema.properties[slot].kind, case .int(let raw) = object._values[slot],
                      raw < 0,
                      let pk = renamed[Key(entity: container.bindings[binding.targetEntity[slot]].index, raw: raw)]
                else { continue }
                object._values[slot] = .int(pk)
            }
        }
    }
}
