import Foundation
import StrataRecords
import StrataStorage
import Synchronization

/// A store opened with a model read from model classes: the object layer's entry point.
///
/// ```swift
/// let container = try ModelContainer(for: [TodoList.self, Item.self], path: "todo.strata")
/// let context = ModelContext(container)
/// ```
///
/// `Sendable`: share one container between tasks and actors, and give each its own
/// ``ModelContext``. Saves of every context go through the container's store, one at a time;
/// each save is announced to the container's observers and to the contexts that merge
/// automatically (``ModelContext/automaticallyMergesChangesFromStore``).
public final class ModelContainer: Sendable {
    /// The record store underneath (its model is the one built from the classes): for this
    /// package's layers, tools and tests. Writing through it would bypass the contexts, so
    /// users reach the store's maintenance through the container (``check(limit:)``,
    /// ``checkpoint()``, ``compact()``, ``backup(to:)``) and its rows through contexts.
    package let store: RecordStore
    let bindings: [EntityBinding]
    let bindingByName: [String: Int]
    /// By ``EntitySchema/serial``: the index of the class's binding, -1 for a class not in the model.
    private let bindingBySchema: [Int]
    /// By schema serial, the entity index of its binding (-1: none).
    private let entityIndexBySchema: [Int]
    private let observers = Mutex<[UInt64: @Sendable (SaveNotification) -> Void]>([:])
    private let nextObserver = Atomic<UInt64>(1)
    private let closedFlag = Atomic<Bool>(false)
    private let inboxes = Mutex<[ObjectIdentifier: SaveMailbox]>([:])
    /// The mailboxes of live change sequences, finished by ``close()`` so none waits forever.
    private let mailboxes = Mutex<[ObjectIdentifier: SaveMailbox]>([:])
    /// Tells this container's save notifications from another's (unique in the process, unlike
    /// an object identity, which a later container may reuse).
    let serial = ModelContainer.nextSerial.add(1, ordering: .relaxed).oldValue
    private static let nextSerial = Atomic<UInt64>(1)
    /// Whether other processes may write the store too (`StoreOptions.sharing`, not read-only).
    let isShared: Bool
    /// Transaction ids of other processes' commits the store took in and no context has been
    /// told of yet (posted by the store's observer, under its writer gate: kept apart from
    /// ``otherProcessDelivery``, which is held while the history is read).
    let otherProcessCommits = Mutex<[ClosedRange<UInt64>]>([])
    /// The history token up to which other processes' commits were announced; held while they
    /// are read, so two threads never announce one twice.
    let otherProcessDelivery = Mutex<HistoryToken>(.start)
    /// The store observer noting other processes' commits, removed by ``close()``.
    let otherProcessObserver = Mutex<UInt64?>(nil)
    /// The task that announces other processes' commits to change sequences as they come.
    let otherProcessWatcher = Mutex<Task<Void, Never>?>(nil)

    /// Opens (or creates) the store at `path` with the model the `classes` declare.
    ///
    /// Throws `StrataError.invalidModel` for a class the model cannot be built from (naming
    /// entity, property and reason; a ``ManagedObject/computedProperties`` entry that is not a
    /// computed property of the class, or whose dependencies name nothing), `modelMismatch` for
    /// a store holding another model unless `migration` says how to migrate it (a
    /// ``MigrationPlan`` ends at the model the classes declare, whose version is the plan's last),
    /// `unsupportedModelVersion` for a store a newer version of the program migrated, and the
    /// store's open errors. The store records persistent history unless `history` is `.off` or `.asStored`
    /// (``history(after:limit:entities:authors:)``).
    public init(for classes: [ManagedObject.Type], path: String, options: StoreOptions = StoreOptions(),
                migration: MigrationPolicy = .none, history: HistoryRecording = .on) throws {
        let schemas = classes.map { EntitySchema.of($0) }
        var version = 1
        if case .plan(let plan) = migration { version = plan.destination.version }
        let model = try ModelBuilderFromClasses(schemas: schemas).build(version: version)
        // Computed properties the classes list are known (with what depends on what) before
        // any object is read: changes name them, fetches know they are computed.
        for schema in schemas { if let problem = schema.registerDeclaredComputed() { throw problem } }
        // A read-only open cannot turn history on: it reads what the store records.
        self.store = try RecordStore(path: path, model: model, options: options, migration: migration,
                                     history: options.readOnly ? .asStored : history)
        var bindings: [EntityBinding] = []
        var byName: [String: Int] = [:]
        var bySchema = Array(repeating: -1, count: (schemas.map(\.serial).max() ?? -1) + 1)
        for schema in schemas {
            let binding = EntityBinding(schema: schema, entity: model.entity(schema.name)!)
            byName[schema.name] = bindings.count
            bySchema[schema.serial] = bindings.count
            bindings.append(binding)
        }
        for binding in bindings {
            for (slot, rel) in binding.relationships.enumerated() {
                guard let rel, let target = byName[rel.target] else { continue }
                binding.targetEntity[slot] = target
                binding.inverseSlot[slot] = bindings[target].schema.slotByName[rel.inverse] ?? -1
            }
        }
        self.bindings = bindings
        self.bindingByName = byName
        self.bindingBySchema = bySchema
        self.entityIndexBySchema = bySchema.map { $0 >= 0 ? bindings[$0].index : -1 }
        self.isShared = options.sharing != .exclusive && !options.readOnly
        if isShared { try startFollowingOtherProcesses() }
    }

    deinit { otherProcessWatcher.withLock { $0?.cancel() } }

    /// The binding of a model class (nil: not in this container's model).
    @inline(__always)
    func binding(of schema: EntitySchema) -> EntityBinding? {
        let serial = schema.serial
        guard serial < bindingBySchema.count else { return nil }
        let index = bindingBySchema[serial]
        return index >= 0 ? bindings[index] : nil
    }

    /// The entity index (``EntityBinding/index``) of `schema`'s binding, or nil: what a released
    /// object needs to leave the registry, without retaining a binding.
    func entityIndex(of schema: EntitySchema) -> Int? {
        let serial = schema.serial
        guard serial < entityIndexBySchema.count else { return nil }
        let index = entityIndexBySchema[serial]
        return index >= 0 ? index : nil
    }

    func binding(named name: String) -> EntityBinding? { bindingByName[name].map { bindings[$0] } }

    /// Whether ``close()`` ran.
    public var isClosed: Bool { closedFlag.load(ordering: .acquiring) }

    /// Throws the error every context operation documents for a closed container: `misuse`,
    /// naming `operation` (the store's own `closed` is for users of the record layer).
    func requireOpen(_ operation: String) throws {
        if isClosed { throw StrataError.misuse("\(operation): the context's container is closed") }
    }

    /// Runs `body`, a context operation that uses the store, as ``requireOpen(_:)`` describes,
    /// also when ``close()`` runs on another thread while it does.
    func whileOpen<T>(_ operation: String, _ body: () throws -> T) throws -> T {
        try requireOpen(operation)
        do {
            return try body()
        } catch StrataError.closed {
            try requireOpen(operation)
            throw StrataError.misuse("\(operation): the context's container is closed")
        }
    }

    /// Checkpoints and closes the store. Contexts of the container then refuse to save or
    /// fetch (`StrataError.misuse`); objects keep the values they hold; change sequences
    /// (``ModelContext/results(of:)``, ``ModelContext/updates(of:)``) end.
    public func close() throws {
        closedFlag.store(true, ordering: .releasing)
        otherProcessWatcher.withLock { $0?.cancel() }
        if let token = otherProcessObserver.withLock({ $0 }) { store.removeOtherProcessCommitObserver(token) }
        for mailbox in mailboxes.withLock({ Array($0.values) }) { mailbox.finish() }
        try store.close()
    }

    /// Calls `observer` after every save of any context of this container, on the saving
    /// context's thread, with what the save changed. Returns a token for ``removeSaveObserver(_:)``.
    @discardableResult
    public func addSaveObserver(_ observer: @escaping @Sendable (SaveNotification) -> Void) -> UInt64 {
        let id = nextObserver.add(1, ordering: .relaxed).oldValue
        observers.withLock { $0[id] = observer }
        return id
    }

    /// Stops calling the observer `token` names.
    public func removeSaveObserver(_ token: UInt64) {
        observers.withLock { _ = $0.removeValue(forKey: token) }
    }

    func announce(_ notification: SaveNotification, from saver: SaveMailbox?) {
        for inbox in inboxes.withLock({ Array($0.values) }) where inbox !== saver { inbox.post(notification) }
        let list = observers.withLock { Array($0.values) }
        for observer in list { observer(notification) }
    }

    /// Registers a change sequence's mailbox; one registered after ``close()`` is finished at once.
    func register(_ mailbox: SaveMailbox) {
        mailboxes.withLock { $0[ObjectIdentifier(mailbox)] = mailbox }
        if isShared { startWatchingOtherProcesses() }
        if isClosed { mailbox.finish() }
    }

    func unregister(_ mailbox: SaveMailbox) {
        mailboxes.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(mailbox)) }
    }

    func attach(_ inbox: SaveMailbox) { inboxes.withLock { $0[ObjectIdentifier(inbox)] = inbox } }
    func detach(_ inbox: SaveMailbox) { inboxes.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(inbox)) } }
    func isAttached(_ inbox: SaveMailbox) -> Bool { inboxes.withLock { $0[ObjectIdentifier(inbox)] != nil } }
}
