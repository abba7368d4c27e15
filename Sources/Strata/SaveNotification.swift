import StrataRecords
import Synchronization

/// What one save changed, announced to the container's observers and merged by other
/// contexts (``ModelContext/mergeChanges(from:)``). Derived values the save moved count: a list
/// whose `itemCount` moved because an item was added is among ``updatedIDs`` with that key.
public struct SaveNotification: Sendable {
    let changes: RecordChanges
    /// The ``ModelContainer/serial`` of the container whose store the save wrote.
    let containerSerial: UInt64
    /// Objects the save inserted.
    public let insertedIDs: [ManagedObjectID]
    /// Objects whose stored or derived values the save changed.
    public let updatedIDs: [ManagedObjectID]
    /// Objects the save deleted (cascades included).
    public let deletedIDs: [ManagedObjectID]
    /// For each updated object, the names of the properties that changed.
    public let changedKeys: [ManagedObjectID: [String]]
    /// The store transaction that committed the save.
    public var transactionID: UInt64 { changes.transactionID }

    init(changes: RecordChanges, container: ModelContainer) {
        self.changes = changes
        self.containerSerial = container.serial
        func id(_ r: RecordChanges.Row) -> ManagedObjectID { ManagedObjectID(entityName: r.id.entity, primaryKey: r.id.primaryKey) }
        insertedIDs = changes.inserted.map(id)
        updatedIDs = changes.updated.map(id)
        deletedIDs = changes.deleted.map(id)
        var keys: [ManagedObjectID: [String]] = [:]
        for r in changes.updated {
            guard let b = container.binding(named: r.id.entity) else { continue }
            keys[id(r)] = r.changedFields.compactMap { f in
                let slot = b.slotOfRowField[f]
                return slot >= 0 ? b.schema.properties[slot].name : nil
            }
        }
        for l in changes.links {
            let i = ManagedObjectID(entityName: l.id.entity, primaryKey: l.id.primaryKey)
            keys[i, default: []].append(l.relationship)
        }
        changedKeys = keys
    }
}

/// Saves announced to a context that merges automatically, waiting for it to take them in
/// its own isolation domain.
final class SaveInbox: Sendable {
    private let pending = Mutex<[SaveNotification]>([])
    private let count = Atomic<Int>(0)

    func post(_ n: SaveNotification) {
        pending.withLock { $0.append(n) }
        count.add(1, ordering: .releasing)
    }

    func take() -> [SaveNotification] {
        guard count.load(ordering: .acquiring) > 0 else { return [] }
        return pending.withLock { p in
            let out = p
            p = []
            count.store(0, ordering: .releasing)
            return out
        }
    }
}
