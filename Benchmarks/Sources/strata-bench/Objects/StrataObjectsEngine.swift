import Foundation
import Strata
import StrataRecords
import Synchronization
import CMalloc

/// The object layer under test: `ModelContainer` over the model classes of `ObjectsModel.swift`,
/// durability `.normal` (as the record layer and GRDB run), used as an app would: contexts,
/// objects made with their initializers, relationships set by property, fetch descriptors,
/// faults fired by reading properties.
final class StrataObjectsEngine: ObjectsEngine {
    static let fileName = "objects.strata"
    static var configuration: String { configuration(.objects) }

    static func configuration(_ name: ObjectsEngineName) -> String {
        "\(name.rawValue): Strata ModelContainer/ModelContext, durability .normal, "
            + (name == .objectsNoHistory ? "history off, " : "history recorded (the default), ")
            + "defaults otherwise (fetches return faults, "
            + "fired on first read); BenchList.items ↔ BenchItem.list, BenchItem.sku indexed"
    }

    private let container: ModelContainer
    private let data: ObjectsData
    /// The list the current inserts go to (inserted by an earlier save, or this one).
    private var currentList: BenchList?
    private var insertContext: ModelContext
    /// One context for all queries and traversals, as a view of an app would have.
    private lazy var readContext = ModelContext(container)
    /// The context update loads into (objects do not keep their context alive).
    private var updateContext: ModelContext?
    private var loaded: [(BenchItem, Int)] = []
    private var mergeReader: ModelContext?
    private var mergeNotification: SaveNotification?

    private init(container: ModelContainer, data: ObjectsData) {
        self.container = container
        self.data = data
        self.insertContext = ModelContext(container)
    }

    static func open(directory: String, data: ObjectsData, name: ObjectsEngineName) throws -> StrataObjectsEngine {
        let container = try ModelContainer(for: [BenchList.self, BenchItem.self], path: directory + "/" + fileName,
                                           options: StoreOptions(durability: .normal),
                                           history: name == .objectsNoHistory ? .off : .on)
        return StrataObjectsEngine(container: container, data: data)
    }

    private static func id(item j: Int) -> ManagedObjectID { ManagedObjectID(entityName: "Item", primaryKey: UInt64(j + 1)) }
    private static func id(list i: Int) -> ManagedObjectID { ManagedObjectID(entityName: "TodoList", primaryKey: UInt64(i + 1)) }

    func insert(lists: Range<Int>, items: Range<Int>) throws {
        let context = insertContext
        var made: [Int: BenchList] = [:]
        for i in lists {
            let list = BenchList(name: data.listName(i))
            context.insert(list)
            made[i] = list
        }
        var listIndex = -1
        var last: BenchItem?
        for j in items {
            let i = data.list(ofItem: j)
            if i != listIndex {
                listIndex = i
                currentList = try made[i] ?? context.existingObject(with: Self.id(list: i), as: BenchList.self)
            }
            let item = BenchItem(title: data.title(j), sku: data.sku(j), amount: data.amount(j), done: data.done(j))
            context.insert(item)
            item.list = currentList
            last = item
        }
        try context.save()
        // Primary keys follow insertion order: item j must be Item/j+1 in every engine.
        if let last, last.objectID.primaryKey != UInt64(items.upperBound) {
            throw BenchError("objects: item \(items.upperBound - 1) got \(last.objectID)")
        }
    }

    func fetchAll() throws -> ObjectsDigest {
        let context = ModelContext(container)
        // Every object is read: loaded by the fetch from the rows its scan read, as a Core Data
        // user asks with `returnsObjectsAsFaults = false` (GRDB's records are loaded too).
        var descriptor = FetchDescriptor<BenchItem>()
        descriptor.returnsObjectsAsFaults = false
        let items = try context.fetch(descriptor)
        var d = ObjectsDigest()
        for item in items { d.add(title: item.title, amount: item.amount, done: item.done) }
        return d
    }

    func fetchBySKU(_ skus: ArraySlice<String>) throws -> ObjectsDigest {
        var d = ObjectsDigest()
        for s in skus {
            for item in try readContext.fetch(FetchDescriptor<BenchItem>(predicate: PropertyPath("sku") == s)) {
                d.add(title: item.title)
            }
        }
        return d
    }

    func traverse(list i: Int) throws -> ObjectsDigest {
        let list = try readContext.existingObject(with: Self.id(list: i), as: BenchList.self)
        var d = ObjectsDigest()
        for item in list.items { d.add(amount: item.amount) }
        return d
    }

    func loadForUpdate(_ items: [Int]) throws {
        let context = ModelContext(container)
        updateContext = context
        loaded = try items.map { (try context.existingObject(with: Self.id(item: $0), as: BenchItem.self), $0) }
    }

    func updateLoaded() throws {
        guard let context = updateContext else { throw BenchError("objects: nothing loaded to update") }
        for (item, j) in loaded { item.amount = data.changedAmount(j) }
        try context.save()
    }

    func prepareMerge(_ items: [Int]) throws {
        let reader = ModelContext(container)
        mergeReader = reader
        loaded = try items.map { (try reader.existingObject(with: Self.id(item: $0), as: BenchItem.self), $0) }
        let writer = ModelContext(container)
        let changing = try items.map { (try writer.existingObject(with: Self.id(item: $0), as: BenchItem.self), $0) }
        for (item, j) in changing { item.amount = data.changedAmount(j) }
        let box = NotificationBox()
        let token = container.addSaveObserver { n in box.value.withLock { $0 = n } }
        try writer.save()
        container.removeSaveObserver(token)
        mergeNotification = box.value.withLock { $0 }
        guard mergeNotification != nil else { throw BenchError("objects: the save was not announced") }
    }

    func merge() throws -> ObjectsDigest {
        guard let reader = mergeReader, let n = mergeNotification else { throw BenchError("objects: merge not prepared") }
        reader.mergeChanges(from: n)
        var d = ObjectsDigest()
        for (item, _) in loaded { d.add(amount: item.amount) }
        return d
    }

    /// A context holds `observed` items, loaded, with a key observer on `amount` each (as a
    /// view showing them would); another context changes `changed` of them and saves
    /// (untimed); the first merges that save: timed until every observer was told.
    func observeSave(observed: [Int], changed: [Int]) throws -> ObservationFigures {
        let view = ModelContext(container)
        let items = try observed.map { try view.existingObject(with: Self.id(item: $0), as: BenchItem.self) }
        var told = [Int](repeating: 0, count: items.count)
        var tokens: [ObservationToken] = []
        tokens.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            tokens.append(try item.observe(\.amount) { _, _ in told[i] += 1 })
        }
        let writer = ModelContext(container)
        for j in changed { try writer.existingObject(with: Self.id(item: j), as: BenchItem.self).amount = data.changedAmount(j) }
        let box = NotificationBox()
        let token = container.addSaveObserver { n in box.value.withLock { $0 = n } }
        let s0 = Measure.now()
        try writer.save()
        let s1 = Measure.now()
        container.removeSaveObserver(token)
        guard let n = box.value.withLock({ $0 }) else { throw BenchError("objects: the save was not announced") }
        Measure.resetPeakRSS()
        let t0 = Measure.now()
        view.mergeChanges(from: n)
        let t1 = Measure.now()
        let changedSet = Set(changed)
        var fired = 0, outside = 0, once = true
        for (i, j) in observed.enumerated() where told[i] > 0 {
            fired += 1
            once = once && told[i] == 1
            if !changedSet.contains(j) { outside += 1 }
        }
        for (item, j) in zip(items, observed) where changedSet.contains(j) && item.amount != data.changedAmount(j) {
            throw BenchError("objects: item \(j) shows \(item.amount) after the merge")
        }
        withExtendedLifetime(tokens) {}
        return ObservationFigures(observers: items.count, changed: changed.count, saveSeconds: Double(s1 - s0) / 1e9,
                                  deliverySeconds: Double(t1 - t0) / 1e9, fired: fired, firedOnce: once, firedOutsideChanged: outside)
    }

    /// Objects inserted and saved in chunks of 50,000, each chunk in a context of its own that
    /// is then dropped (untimed: the figure is about faults), pages warmed by counting, then
    /// one fetch registers every object as a fault and the array keeps them. The malloc threshold is fixed so the fetch's large temporary
    /// arrays are returned to the system when freed, not counted as faults.
    func registerFaults(_ count: Int) throws -> FaultFigures {
        _ = mallopt(M_MMAP_THRESHOLD, 128 * 1024)
        for start in stride(from: 0, to: count, by: 50_000) {
            do {
                let writer = ModelContext(container)
                for j in start..<min(count, start + 50_000) {
                    writer.insert(BenchItem(title: data.title(j), sku: data.sku(j), amount: data.amount(j), done: data.done(j)))
                }
                try writer.save()
            }
        }
        let context = ModelContext(container)
        guard try ModelContext(container).fetchCount(FetchDescriptor<BenchItem>()) == count else {
            throw BenchError("objects: the faults store does not hold \(count) items")
        }
        malloc_trim(0)
        let rss0 = Measure.currentRSSBytes() ?? 0
        let heap0 = Measure.mallocInUseBytes()
        let t0 = Measure.now()
        let objects = try context.fetch(FetchDescriptor<BenchItem>())
        let t1 = Measure.now()
        malloc_trim(0)
        let rss1 = Measure.currentRSSBytes() ?? 0
        let heap1 = Measure.mallocInUseBytes()
        let faults = objects.reduce(0) { $0 + ($1.isFault ? 1 : 0) }
        guard objects.count == count, faults == count else {
            throw BenchError("objects: \(objects.count) objects, \(count - faults) of them not faults")
        }
        return withExtendedLifetime(objects) {
            FaultFigures(count: count, seconds: Double(t1 - t0) / 1e9, rssDeltaBytes: rss1 - rss0,
                         mallocDeltaBytes: heap1 - heap0, faults: faults)
        }
    }

    func digest() throws -> ObjectsDigest {
        let context = ModelContext(container)
        var d = ObjectsDigest()
        for item in try context.fetch(FetchDescriptor<BenchItem>()) {
            d.add(title: item.title, amount: item.amount, done: item.done, list: item.list.flatMap { $0.objectID.primaryKey }.map { Int64($0) - 1 })
        }
        d.lists = try context.fetchCount(FetchDescriptor<BenchList>())
        return d
    }

    func close() throws {
        currentList = nil
        loaded = []
        updateContext = nil
        mergeReader = nil
        try container.close()
    }

    static func checkStore(directory: String) -> StoreCheck? { checkStrataStore(path: directory + "/" + fileName) }
}

/// Where the save observer leaves the notification (observers are `@Sendable`).
private final class NotificationBox: Sendable {
    let value = Mutex<SaveNotification?>(nil)
}
