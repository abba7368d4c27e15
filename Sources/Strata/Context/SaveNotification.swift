import StrataRecords
import Synchronization

/// What one save changed, announced to the container's observers and merged by other
/// contexts (``ModelContext/mergeChanges(from:)-(SaveNotification)``). Derived values the save moved count: a list
/// whose `itemCount` moved because an item was added is among ``updatedIDs`` with that key.
public struct SaveNotification: Sendable {
    let changes: RecordChanges
    /// The ``ModelContainer/serial`` of the container whose store the save wrote.
    let containerSerial: UInt64
    /// The identifiers and changed keys, made on first use: most saves are merged from
    /// ``changes`` (or not at all) and nobody reads them, and making them costs an identifier
    /// (an entity name) per row and a dictionary entry per updated row.
    private let identifiers: LazyIdentifiers

    /// Objects the save inserted.
    public var insertedIDs: [ManagedObjectID] { identifiers.value.inserted }
    /// Objects whose stored or derived values the save changed.
    public var updatedIDs: [ManagedObjectID] { identifiers.value.updated }
    /// Objects the save deleted (cascades included).
    public var deletedIDs: [ManagedObjectID] { identifiers.value.deleted }
    /// For each updated object, the names of the properties that changed.
    public var changedKeys: [ManagedObjectID: [String]] { identifiers.value.changedKeys }
    /// The store transaction that committed the save.
    public var transactionID: UInt64 { changes.transactionID }
    /// Whether another process made the commit (a store shared between processes, read from its
    /// persistent history): its rows are read again from the store when it is merged.
    public let isFromAnotherProcess: Bool
    /// Whether what changed is not known (another process committed while history was not
    /// recorded, or after the history was purged): a merge refreshes every object.
    public let changesAreUnknown: Bool

    init(changes: RecordChanges, container: ModelContainer, isFromAnotherProcess: Bool = false,
         changesAreUnknown: Bool = false) {
        self.changes = changes
        self.isFromAnotherProcess = isFromAnotherProcess
        self.changesAreUnknown = changesAreUnknown
        self.containerSerial = container.serial
        self.identifiers = LazyIdentifiers(changes: changes, bindings: container.bindings,
                                           byName: container.bindingByName)
    }

    /// What the public properties list, computed once.
    struct Identifiers: Sendable {
        var inserted: [ManagedObjectID]
        var updated: [ManagedObjectID]
        var deleted: [ManagedObjectID]
        var changedKeys: [ManagedObjectID: [String]]
    }

    /// ``Identifiers`` made from the change set on first read (by any thread: notifications
    /// go to observers), then kept. The container's bindings are kept, not the container.
    final class LazyIdentifiers: Sendable {
        private let changes: RecordChanges
        private let bindings: [EntityBinding]
        private let byName: [String: Int]
        private let made = Mutex<Identifiers?>(nil)

        init(changes: RecordChanges, bindings: [EntityBinding], byName: [String: Int]) {
            self.changes = changes
            self.bindings = bindings
            self.byName = byName
        }

        var value: Identifiers {
            if let known = made.withLock({ $0 }) { return known }
            let fresh = make()
            return made.withLock { kept in
                if let kept { return kept }
                kept = fresh
                return fresh
            }
        }

        private func make() -> Identifiers {
            func id(_ row: RecordChanges.Row) -> ManagedObjectID {
                ManagedObjectID(entityName: row.id.entity, primaryKey: row.id.primaryKey)
            }
            var keys: [ManagedObjectID: [String]] = [:]
            for row in changes.updated {
                guard let i = byName[row.id.entity] else { continue }
                let binding = bindings[i]
                keys[id(row)] = row.changedFields.compactMap { field in
                    let slot = binding.slotOfRowField[field]
                    return slot >= 0 ? binding.schema.properties[slot].name : nil
                }
            }
            for link in changes.links {
                let objectID = ManagedObjectID(entityName: link.id.entity, primaryKey: link.id.primaryKey)
                keys[objectID, default: []].append(link.relationship)
            }
            return Identifiers(inserted: changes.inserted.map(id), updated: changes.updated.map(id),
                               deleted: changes.deleted.map(id), changedKeys: keys)
        }
    }
}
