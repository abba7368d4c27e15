import StrataRecords

/// What changed in a context's objects since it last told: Core Data's objects-did-change
/// notification. Told to ``ModelContext/observeObjectsDidChange(_:)`` handlers by
/// ``ModelContext/processPendingChanges()``, at the start of a save (the changes about to be
/// saved) and at its end (values the save moved: derived attributes), after merging other
/// contexts' saves, and after a rollback.
public struct ObjectsDidChange {
    /// Objects inserted since the last notification.
    public var insertedObjects: Set<ManagedObject> = []
    /// Objects whose properties changed (not inserted or deleted ones).
    public var updatedObjects: Set<ManagedObject> = []
    /// Objects deleted (in this context, or by a merged save).
    public var deletedObjects: Set<ManagedObject> = []
    /// The properties that changed, by object: stored, transient, derived, relationship and
    /// computed properties (a computed one when a dependency changed).
    public var changedKeys: [ManagedObject: Set<String>] = [:]

    /// Whether nothing changed.
    public var isEmpty: Bool { insertedObjects.isEmpty && updatedObjects.isEmpty && deletedObjects.isEmpty }
}

extension ModelContext {
    /// Calls `handler` with what changed in the context's objects (see ``ObjectsDidChange``)
    /// until the token is cancelled or released. Only changes made while observed are told.
    public func observeObjectsDidChange(_ handler: @escaping (ObjectsDidChange) -> Void) -> ObservationToken {
        let id = nextObserverID
        nextObserverID += 1
        changeObservers.append((id, handler))
        return ObservationToken { [weak self] in self?.changeObservers.removeAll { $0.0 == id } }
    }

    var hasChangeObservers: Bool { !changeObservers.isEmpty }

    func recordChange(of object: ManagedObject, key: String) {
        guard hasChangeObservers, object.context === self || object.isDeleted else { return }
        if object.isInserted { pendingChange.insertedObjects.insert(object); return }
        if object.isDeleted { return }
        pendingChange.updatedObjects.insert(object)
        pendingChange.changedKeys[object, default: []].insert(key)
    }

    func recordInsert(_ object: ManagedObject) {
        if hasChangeObservers { pendingChange.insertedObjects.insert(object) }
    }

    func recordDelete(_ object: ManagedObject) {
        guard hasChangeObservers else { return }
        if pendingChange.insertedObjects.remove(object) != nil { return }
        pendingChange.updatedObjects.remove(object)
        pendingChange.changedKeys[object] = nil
        pendingChange.deletedObjects.insert(object)
    }

    /// Tells the observers what changed since they were last told, if anything.
    func postObjectsDidChange() {
        guard hasChangeObservers, !pendingChange.isEmpty else { return }
        let change = pendingChange
        pendingChange = ObjectsDidChange()
        for (_, handler) in changeObservers { handler(change) }
    }
}
