import ArgumentParser

/// The engines of `strata-bench objects`.
enum ObjectsEngineName: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    /// Strata's object layer: model classes, `ModelContainer`, `ModelContext`s (recording
    /// persistent history, as a container does by default).
    case objects
    /// The same with history off: objects-nohistory ÷ objects is what history costs.
    case objectsNoHistory = "objects-nohistory"
    /// Strata's record layer alone, the same model built with `Entity`: what objects cost.
    case records
    /// GRDB 7 over the system's SQLite: `Codable` record structs and associations.
    case grdb
    /// GRDB 7 at its best: hand-written `init(row:)` (columns by index) and `encode(to:)`,
    /// cached statements; the same database as `grdb`.
    case grdbRows = "grdb-rows"

    /// The GRDB engines, whose faster one the targets against "GRDB at its best" use.
    static let grdbEngines: [ObjectsEngineName] = [.grdb, .grdbRows]
}

/// What the objects workloads need from an engine. Items and lists are named by index
/// (primary key − 1). Each method that changes data is one save (one transaction); each query
/// method one read transaction (the object layer: one context's reads). Every read method
/// returns a digest of what it read, so engines can be compared.
protocol ObjectsEngine: AnyObject {
    /// One line describing the engine's setup, for the report header.
    static var configuration: String { get }

    /// Opens (creating if missing) the engine's store in `directory`; `name` says which
    /// configuration of the engine runs.
    static func open(directory: String, data: ObjectsData, name: ObjectsEngineName) throws -> Self

    /// One save: the lists `lists` (may be empty), then the items `items`, each item in list
    /// `data.list(ofItem:)` (inserted by this save or an earlier one).
    func insert(lists: Range<Int>, items: Range<Int>) throws

    /// Fetches every item and reads its title, amount and done flag.
    func fetchAll() throws -> ObjectsDigest

    /// For each SKU, fetches the items whose indexed `sku` equals it and reads their titles.
    func fetchBySKU(_ skus: ArraySlice<String>) throws -> ObjectsDigest

    /// Reads the amount of every member of list `list`'s `items`, reached from the list.
    func traverse(list: Int) throws -> ObjectsDigest

    /// Untimed: gets the items to change ready as a user of the engine would hold them.
    func loadForUpdate(_ items: [Int]) throws
    /// Gives each loaded item `data.changedAmount(j)`, in one save.
    func updateLoaded() throws

    /// Untimed: a second view (context, row cache, structs) holds `items`; the first changes
    /// their amounts and saves.
    func prepareMerge(_ items: [Int]) throws
    /// The second view takes in that save; returns the amounts it then shows.
    func merge() throws -> ObjectsDigest

    /// The object layer only: registers `count` unchanged faults (untimed setup of the rows
    /// first) and measures what they cost.
    func registerFaults(_ count: Int) throws -> FaultFigures
    /// The object layer only: key observers on `observed` items, a save of another context
    /// changing `changed` of them merged; what telling them cost.
    func observeSave(observed: [Int], changed: [Int]) throws -> ObservationFigures

    /// Untimed: every item (title, amount, done, list) and the number of lists.
    func digest() throws -> ObjectsDigest
    func close() throws
    /// Strata: reopens the closed store read-only and checks it.
    static func checkStore(directory: String) -> StoreCheck?
}

extension ObjectsEngine {
    func registerFaults(_ count: Int) throws -> FaultFigures {
        throw BenchError("registered faults are measured for the object layer only")
    }

    func observeSave(observed: [Int], changed: [Int]) throws -> ObservationFigures {
        throw BenchError("property observers are measured for the object layer only")
    }
}

/// What telling property observers of a merged save cost (``StrataObjectsEngine/observeSave(observed:changed:)``).
struct ObservationFigures: Codable, Sendable {
    /// Objects with a key observer.
    var observers: Int
    /// Objects the other context's save changed (all observed).
    var changed: Int
    /// The other context's save, in seconds (not part of the delivery).
    var saveSeconds: Double
    /// From the merge's start until every observer was told, in seconds.
    var deliverySeconds: Double
    /// Observers told, whether each at most once, and how many of objects the save did not change.
    var fired: Int
    var firedOnce: Bool
    var firedOutsideChanged: Int
}

/// What registering faults cost (``ObjectsEngine/registerFaults(_:)``).
struct FaultFigures: Codable, Sendable {
    var count: Int
    /// The fetch that registered them, in seconds.
    var seconds: Double
    /// Growth of the resident set (`VmRSS`) while they were registered and held.
    var rssDeltaBytes: Int
    /// Growth of the bytes malloc had handed out (`mallinfo2`), the same span.
    var mallocDeltaBytes: Int
    /// Faults still faults afterwards (all of them, unless a fetch fired one).
    var faults: Int
}
