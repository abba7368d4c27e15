import Foundation

/// The workloads of `strata-bench records`, by the names the issue gives them.
enum RecordsWorkload: Hashable, Sendable {
    /// `lists × itemsPerList` items (and their lists) inserted, items in shuffled list order.
    case bulkInsert
    /// Items inserted into lists that already hold `size` items (cost per insert at that size),
    /// each transaction's items into one list.
    case insertIntoList(size: Int)
    /// Items moved between random lists of the bulk store.
    case moveItems
    /// Lists with `fanoutItems` items renamed, one rename per transaction.
    case renameFanout
    /// Case- and diacritic-insensitive 3-letter prefix queries on `searchName`.
    case prefixSearch
    /// Equality fetches of items by their indexed `sku`.
    case fetchIndexed

    static func all(_ scale: RecordsScale) -> [RecordsWorkload] {
        [.bulkInsert] + scale.listSizes.map { .insertIntoList(size: $0) } + [.moveItems, .renameFanout, .prefixSearch, .fetchIndexed]
    }

    var name: String {
        switch self {
        case .bulkInsert: return "bulkinsert"
        case .insertIntoList(let size): return "insert_list\(size)"
        case .moveItems: return "moveitems"
        case .renameFanout: return "renamefanout"
        case .prefixSearch: return "prefixsearch"
        case .fetchIndexed: return "fetchindexed"
        }
    }

    init?(name: String) {
        switch name {
        case "bulkinsert": self = .bulkInsert
        case "moveitems": self = .moveItems
        case "renamefanout": self = .renameFanout
        case "prefixsearch": self = .prefixSearch
        case "fetchindexed": self = .fetchIndexed
        default:
            guard name.hasPrefix("insert_list"), let size = Int(name.dropFirst("insert_list".count)), size > 0 else { return nil }
            self = .insertIntoList(size: size)
        }
    }

    /// Workloads that start from the store `bulkinsert` leaves.
    var needsBulkStore: Bool { self == .moveItems || self == .prefixSearch || self == .fetchIndexed }
    /// Workloads that leave a store of their own (measured and checked after close).
    var leavesStore: Bool { self != .prefixSearch && self != .fetchIndexed }
}

/// What one run of one records workload on one engine measured; the child prints it as JSON.
struct RecordsRunResult: BenchRun {
    var workload: String
    var engine: String
    /// Rows inserted, items moved, lists renamed or queries answered.
    var ops: Int
    var seconds: Double
    /// Per transaction (per rename in `renamefanout`; per batch of queries in the query workloads).
    var p50Micros: Double?
    var p99Micros: Double?
    var bytes: Int?
    var closeMillis: Double?
    var peakRSSBytes: Int?
    /// Sums over the store (or the queries' hits), for comparing engines.
    var digest: RecordsDigest
    var checkClean: Bool?
    var checkProblems: Int?
    var checkMessages: [String]?
    /// Set when the run went on for a time window instead of a fixed count: the window's
    /// length in seconds (`ops` is what it did in that time).
    var timeWindowSeconds: Double?
    var repeatIndex: Int? = nil
}

/// Runs one records workload on one engine, generic so each engine's calls are direct.
struct RecordsRunner<Engine: RecordsEngine> {
    let engineName: RecordsEngineName
    let scale: RecordsScale
    /// The directory this run owns.
    let directory: String
    /// The store `bulkinsert` left, for the workloads that start from it.
    let bulkStore: String?

    func run(_ workload: RecordsWorkload) throws -> RecordsRunResult {
        switch workload {
        case .bulkInsert: return try bulkInsert()
        case .insertIntoList(let size): return try insertIntoList(size)
        case .moveItems: return try moveItems()
        case .renameFanout: return try renameFanout()
        case .prefixSearch: return try query(.prefixSearch, RecordsData.prefixQueries(scale.queries, lists: scale.lists, seed: RecordsSeeds.prefixes)) { e, batch in try e.prefixSearch(batch) }
        case .fetchIndexed: return try query(.fetchIndexed, RecordsData.skuQueries(scale.queries, items: scale.bulkItems, seed: RecordsSeeds.skus)) { e, batch in try e.fetchBySKU(batch) }
        }
    }

    /// Times `transactions` calls of `body`, each one transaction of `ops / transactions`
    /// operations (for the progress lines); returns the total time and the sorted per-call latencies.
    private func timed(_ w: RecordsWorkload, _ transactions: Int, ops: Int, _ body: (Int) throws -> Void) throws -> (nanoseconds: UInt64, latencies: [UInt64]) {
        var latencies = [UInt64](repeating: 0, count: transactions)
        var progress = ProgressMeter("\(w.name) \(engineName.rawValue)", total: ops)
        Measure.resetPeakRSS()
        let t0 = Measure.now()
        for i in 0..<transactions {
            let s = Measure.now()
            try body(i)
            latencies[i] = Measure.now() - s
            progress.update(done: ops * (i + 1) / transactions)
        }
        let t1 = Measure.now()
        latencies.sort()
        return (t1 - t0, latencies)
    }

    /// Like ``timed(_:_:ops:_:)``, but stops at the first transaction boundary after `seconds`
    /// (or after `transactions`, if that comes first); also returns how many ran.
    private func timedWindow(_ w: RecordsWorkload, _ seconds: Double, _ transactions: Int, _ body: (Int) throws -> Void) throws
        -> (nanoseconds: UInt64, latencies: [UInt64], transactions: Int) {
        var latencies: [UInt64] = []
        latencies.reserveCapacity(transactions)
        var progress = ProgressMeter("\(w.name) \(engineName.rawValue)", window: seconds)
        let window = UInt64(seconds * 1e9)
        Measure.resetPeakRSS()
        let t0 = Measure.now()
        var i = 0
        while i < transactions, Measure.now() - t0 < window {
            let s = Measure.now()
            try body(i)
            latencies.append(Measure.now() - s)
            i += 1
            progress.update(done: i * scale.batch)
        }
        let t1 = Measure.now()
        latencies.sort()
        return (t1 - t0, latencies, i)
    }

    private func result(_ w: RecordsWorkload, ops: Int, _ t: (nanoseconds: UInt64, latencies: [UInt64])) -> RecordsRunResult {
        RecordsRunResult(workload: w.name, engine: engineName.rawValue, ops: ops, seconds: Double(t.nanoseconds) / 1e9,
                         p50Micros: Double(Measure.percentile(t.latencies, 0.50)) / 1e3,
                         p99Micros: Double(Measure.percentile(t.latencies, 0.99)) / 1e3,
                         peakRSSBytes: Measure.peakRSSBytes(), digest: RecordsDigest())
    }

    /// Untimed: the digest, then a timed close, the bytes left, and (Strata) the store's check.
    private func finish(_ engine: Engine, _ r: inout RecordsRunResult) throws {
        r.digest = try engine.digest()
        let c0 = Measure.now()
        try engine.close()
        r.closeMillis = Double(Measure.now() - c0) / 1e6
        r.bytes = Measure.directoryBytes(directory)
        if let check = Engine.checkStore(directory: directory) {
            r.checkClean = check.isClean
            r.checkProblems = check.problems.count
            r.checkMessages = Array(check.problems.prefix(maxCheckMessages))
        }
    }

    private func slices<T>(_ all: [T], _ i: Int) -> ArraySlice<T> {
        all[(i * scale.batch)..<min(all.count, (i + 1) * scale.batch)]
    }

    private func transactions(_ count: Int) -> Int { (count + scale.batch - 1) / scale.batch }

    private func bulkInsert() throws -> RecordsRunResult {
        let engine = try Engine.open(directory: directory, name: engineName)
        let placements = RecordsData.shuffledPlacements(lists: scale.lists, perList: scale.itemsPerList, seed: RecordsSeeds.bulkOrder)
        let listTransactions = transactions(scale.lists)
        let t = try timed(.bulkInsert, listTransactions + transactions(placements.count), ops: scale.lists + placements.count) { i in
            if i < listTransactions {
                try engine.insertLists((i * scale.batch)..<min(scale.lists, (i + 1) * scale.batch))
            } else {
                try engine.insertItems(slices(placements, i - listTransactions))
            }
        }
        var r = result(.bulkInsert, ops: scale.lists + placements.count, t)
        try finish(engine, &r)
        return r
    }

    private func insertIntoList(_ size: Int) throws -> RecordsRunResult {
        let engine = try Engine.open(directory: directory, name: engineName)
        let lists = max(1, scale.setupItems / size)
        let setup = RecordsData.shuffledPlacements(lists: lists, perList: size, seed: RecordsSeeds.sizedOrder)
        try engine.load(lists: lists, placements: setup)
        // Each transaction adds its items to one list, the next transaction to the next list:
        // every size pays for one parent per transaction, so only the list's size differs.
        // (Lists of N hold up to N + batch items meanwhile, which flatters recounting at small N.)
        let inserts = (0..<scale.inserts).map { Placement(item: Int32(setup.count + $0), list: Int32(($0 / scale.batch) % lists)) }
        let w = RecordsWorkload.insertIntoList(size: size)
        guard scale.isWindowed(engineName, w) else {
            let t = try timed(w, transactions(inserts.count), ops: inserts.count) { i in try engine.insertItems(slices(inserts, i)) }
            var r = result(w, ops: inserts.count, t)
            try finish(engine, &r)
            return r
        }
        // Recount triggers cost O(list size) per insert: a fixed count on a big list takes
        // minutes, so the run measures what it does in a fixed time instead.
        let t = try timedWindow(w, scale.recountWindow, transactions(inserts.count)) { i in try engine.insertItems(slices(inserts, i)) }
        let done = min(inserts.count, t.transactions * scale.batch)
        var r = result(w, ops: done, (t.nanoseconds, t.latencies))
        r.timeWindowSeconds = scale.recountWindow
        try finish(engine, &r)
        // The store holds fewer items than the other engines' stores, so the parent cannot
        // compare it with theirs: check it against what this run inserted instead.
        let expected = RecordsDigest.expected(lists: lists, items: setup.count + done)
        guard r.digest == expected else {
            throw BenchError("\(engineName.rawValue): \(w.name) after a time window: store has \(r.digest), expected \(expected)")
        }
        return r
    }

    private func requireBulkStore() throws -> String {
        guard let bulkStore, FileManager.default.fileExists(atPath: bulkStore) else {
            throw BenchError("\(engineName.rawValue): this workload needs the store bulkinsert leaves")
        }
        return bulkStore
    }

    private func moveItems() throws -> RecordsRunResult {
        // A copy: the query workloads read the bulk store as bulkinsert left it.
        try Measure.copyDirectory(try requireBulkStore(), to: directory)
        let engine = try Engine.open(directory: directory, name: engineName)
        var placements = RecordsData.shuffledPlacements(lists: scale.lists, perList: scale.itemsPerList, seed: RecordsSeeds.bulkOrder)
        let moves = RecordsData.moves(scale.moves, placements: &placements, lists: scale.lists, seed: RecordsSeeds.moves)
        let t = try timed(.moveItems, transactions(moves.count), ops: moves.count) { i in try engine.moveItems(slices(moves, i)) }
        var r = result(.moveItems, ops: moves.count, t)
        try finish(engine, &r)
        return r
    }

    private func renameFanout() throws -> RecordsRunResult {
        let engine = try Engine.open(directory: directory, name: engineName)
        let setup = RecordsData.shuffledPlacements(lists: scale.fanoutLists, perList: scale.fanoutItems, seed: RecordsSeeds.fanout)
        try engine.load(lists: scale.fanoutLists, placements: setup)
        let t = try timed(.renameFanout, scale.renames, ops: scale.renames) { i in
            try engine.renameList(i % scale.fanoutLists, to: "Renamed Ünïcode \(i) \(RecordsData.listName(i))")
        }
        var r = result(.renameFanout, ops: scale.renames, t)
        try finish(engine, &r)
        return r
    }

    /// A query workload on the bulk store: one untimed pass to warm every cache, then the
    /// timed pass, in batches of `scale.batch` queries per read transaction.
    private func query(_ w: RecordsWorkload, _ queries: [String], _ ask: (Engine, ArraySlice<String>) throws -> Int) throws -> RecordsRunResult {
        let engine = try Engine.open(directory: try requireBulkStore(), name: engineName)
        defer { try? engine.close() }
        var warm = 0
        for i in 0..<transactions(queries.count) { warm += try ask(engine, slices(queries, i)) }
        var hits = 0
        let t = try timed(w, transactions(queries.count), ops: queries.count) { i in hits += try ask(engine, slices(queries, i)) }
        guard hits == warm else { throw BenchError("\(engineName.rawValue): \(w.name) found \(hits), then \(warm)") }
        var r = result(w, ops: queries.count, t)
        r.digest.hits = hits
        return r
    }
}
