import Foundation
import StrataTesting

/// The workloads of `strata-bench objects`, in the order they run.
enum ObjectsWorkload: String, CaseIterable, Codable, Sendable {
    /// `items` items (and their lists) inserted, `batch` per save.
    case insert
    /// Every item fetched, three properties read from each.
    case fetchall
    /// Equality fetches on the indexed `sku`, the title of each result read.
    case fetchindexed
    /// Each list's `items` read from the list, the amount of each member read.
    case traverse
    /// One property of `updates` items changed, one save.
    case update
    /// A save changing `merges` items taken in by a second view holding them.
    case merge
    /// The object layer only: `faults` objects registered as faults and kept.
    case faults
    /// The object layer only: `observed` items with a key observer each in one context;
    /// another context saves a change of `observedChanges` of them, the first merges it.
    case observe

    /// Workloads that start from the store `insert` leaves.
    var needsInsertStore: Bool { self != .insert && self != .faults }
    /// Workloads only the object layer runs.
    var isObjectsOnly: Bool { self == .faults || self == .observe }
    /// Workloads that change the store (on a copy of the insert store): checked and compared after.
    var changesStore: Bool { self == .insert || self == .update || self == .merge }
    /// Which engines run it.
    func runs(on engine: ObjectsEngineName) -> Bool { !isObjectsOnly || engine == .objects }
}

/// What one run of one objects workload on one engine measured; the child prints it as JSON.
struct ObjectsRunResult: BenchRun {
    var workload: String
    var engine: String
    /// Objects inserted, read, found, changed or registered.
    var ops: Int
    var seconds: Double
    /// Per save (insert), per read transaction of queries, per traversal; nil for one-shot workloads.
    var p50Micros: Double?
    var p99Micros: Double?
    var bytes: Int?
    var closeMillis: Double?
    var peakRSSBytes: Int?
    /// What the timed part read (empty for insert and update).
    var digest: ObjectsDigest
    /// What the store holds afterwards, for the workloads that change it.
    var store: ObjectsDigest?
    var faults: FaultFigures?
    var observation: ObservationFigures?
    var checkClean: Bool?
    var checkProblems: Int?
    var checkMessages: [String]?
    var repeatIndex: Int? = nil
}

/// Runs one objects workload on one engine, generic so each engine's calls are direct.
struct ObjectsRunner<Engine: ObjectsEngine> {
    let engineName: ObjectsEngineName
    let data: ObjectsData
    /// The directory this run owns.
    let directory: String
    /// The store `insert` left, for the workloads that start from it.
    let insertStore: String?

    var scale: ObjectsScale { data.scale }

    func run(_ workload: ObjectsWorkload) throws -> ObjectsRunResult {
        switch workload {
        case .insert: return try insert()
        case .fetchall: return try readOnce(.fetchall) { try $0.fetchAll() }
        case .fetchindexed: return try fetchIndexed()
        case .traverse: return try traverse()
        case .update: return try update()
        case .merge: return try merge()
        case .faults: return try faults()
        case .observe: return try observe()
        }
    }

    /// Times `count` calls of `body`, together `ops` operations of `w` (for the progress
    /// lines); returns the total time and the sorted per-call latencies.
    private func timed(_ w: ObjectsWorkload, _ count: Int, ops: Int, _ body: (Int) throws -> Void) throws -> (nanoseconds: UInt64, latencies: [UInt64]) {
        var latencies = [UInt64](repeating: 0, count: count)
        var progress = ProgressMeter("\(w.rawValue) \(engineName.rawValue)", total: ops)
        Measure.resetPeakRSS()
        let t0 = Measure.now()
        for i in 0..<count {
            let s = Measure.now()
            try body(i)
            latencies[i] = Measure.now() - s
            progress.update(done: ops * (i + 1) / count)
        }
        let t1 = Measure.now()
        latencies.sort()
        return (t1 - t0, latencies)
    }

    private func result(_ w: ObjectsWorkload, ops: Int, _ t: (nanoseconds: UInt64, latencies: [UInt64])) -> ObjectsRunResult {
        let sampled = t.latencies.count > 1
        return ObjectsRunResult(workload: w.rawValue, engine: engineName.rawValue, ops: ops, seconds: Double(t.nanoseconds) / 1e9,
                                p50Micros: sampled ? Double(Measure.percentile(t.latencies, 0.50)) / 1e3 : nil,
                                p99Micros: sampled ? Double(Measure.percentile(t.latencies, 0.99)) / 1e3 : nil,
                                peakRSSBytes: Measure.peakRSSBytes(), digest: ObjectsDigest())
    }

    /// Untimed: the store's digest, then a timed close, the bytes left, and (Strata) the check.
    private func finish(_ engine: Engine, _ r: inout ObjectsRunResult) throws {
        r.store = try engine.digest()
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

    private func requireInsertStore() throws -> String {
        guard let insertStore, FileManager.default.fileExists(atPath: insertStore) else {
            throw BenchError("\(engineName.rawValue): this workload needs the store insert leaves")
        }
        return insertStore
    }

    /// A copy of the insert store in this run's directory (for workloads that change it).
    private func openCopy() throws -> Engine {
        try Measure.copyDirectory(try requireInsertStore(), to: directory)
        return try Engine.open(directory: directory, data: data)
    }

    private func insert() throws -> ObjectsRunResult {
        let engine = try Engine.open(directory: directory, data: data)
        let saves = (scale.items + scale.batch - 1) / scale.batch
        var listsMade = 0
        let t = try timed(.insert, saves, ops: scale.items) { s in
            let items = (s * scale.batch)..<min(scale.items, (s + 1) * scale.batch)
            let needed = data.list(ofItem: items.upperBound - 1) + 1
            try engine.insert(lists: listsMade..<max(listsMade, needed), items: items)
            listsMade = max(listsMade, needed)
        }
        var r = result(.insert, ops: scale.items, t)
        try finish(engine, &r)
        return r
    }

    /// One untimed pass to warm every cache, then the timed pass; both must read the same.
    private func readOnce(_ w: ObjectsWorkload, _ body: (Engine) throws -> ObjectsDigest) throws -> ObjectsRunResult {
        let engine = try Engine.open(directory: try requireInsertStore(), data: data)
        defer { try? engine.close() }
        let warm = try body(engine)
        var read = ObjectsDigest()
        let t = try timed(w, 1, ops: 1) { _ in read = try body(engine) }
        guard read == warm else { throw BenchError("\(engineName.rawValue): \(w.rawValue) read \(read), then \(warm)") }
        var r = result(w, ops: read.objects, t)
        r.digest = read
        return r
    }

    private func fetchIndexed() throws -> ObjectsRunResult {
        let queries = data.skuQueries()
        let batches = (queries.count + scale.queryBatch - 1) / scale.queryBatch
        func batch(_ i: Int) -> ArraySlice<String> { queries[(i * scale.queryBatch)..<min(queries.count, (i + 1) * scale.queryBatch)] }
        let engine = try Engine.open(directory: try requireInsertStore(), data: data)
        defer { try? engine.close() }
        var warm = ObjectsDigest()
        for i in 0..<batches { let d = try engine.fetchBySKU(batch(i)); warm.objects += d.objects; warm.checksum &+= d.checksum }
        var read = ObjectsDigest()
        let t = try timed(.fetchindexed, batches, ops: queries.count) { i in let d = try engine.fetchBySKU(batch(i)); read.objects += d.objects; read.checksum &+= d.checksum }
        guard read == warm else { throw BenchError("\(engineName.rawValue): fetchindexed read \(read), then \(warm)") }
        var r = result(.fetchindexed, ops: queries.count, t)
        r.digest = read
        return r
    }

    private func traverse() throws -> ObjectsRunResult {
        let lists = (0..<scale.traversals).map { $0 % scale.lists }
        let engine = try Engine.open(directory: try requireInsertStore(), data: data)
        defer { try? engine.close() }
        var warm = ObjectsDigest()
        for l in lists { let d = try engine.traverse(list: l); warm.objects += d.objects; warm.checksum &+= d.checksum }
        var read = ObjectsDigest()
        let t = try timed(.traverse, lists.count, ops: lists.count * scale.itemsPerList) { i in
            let d = try engine.traverse(list: lists[i])
            read.objects += d.objects
            read.checksum &+= d.checksum
        }
        guard read == warm else { throw BenchError("\(engineName.rawValue): traverse read \(read), then \(warm)") }
        var r = result(.traverse, ops: read.objects, t)
        r.digest = read
        return r
    }

    private func update() throws -> ObjectsRunResult {
        let engine = try openCopy()
        let items = data.chosenItems(scale.updates, stream: ObjectsSeeds.updates)
        try engine.loadForUpdate(items)
        let t = try timed(.update, 1, ops: items.count) { _ in try engine.updateLoaded() }
        var r = result(.update, ops: items.count, t)
        try finish(engine, &r)
        return r
    }

    private func merge() throws -> ObjectsRunResult {
        let engine = try openCopy()
        let items = data.chosenItems(scale.merges, stream: ObjectsSeeds.merges)
        try engine.prepareMerge(items)
        var read = ObjectsDigest()
        let t = try timed(.merge, 1, ops: items.count) { _ in read = try engine.merge() }
        var expected = ObjectsDigest()
        for j in items { expected.add(amount: data.changedAmount(j)) }
        guard read == expected else { throw BenchError("\(engineName.rawValue): merge shows \(read), expected \(expected)") }
        var r = result(.merge, ops: items.count, t)
        try finish(engine, &r)
        r.digest = read
        return r
    }

    private func observe() throws -> ObjectsRunResult {
        let engine = try openCopy()
        defer { try? engine.close() }
        let observed = data.chosenItems(scale.observed, stream: ObjectsSeeds.observed)
        var g = SplitMix64(seed: scale.seed ^ ObjectsSeeds.observedChanges)
        let changed = Array(observed.shuffled(using: &g).prefix(scale.observedChanges)).sorted()
        let f = try engine.observeSave(observed: observed, changed: changed)
        guard f.fired == changed.count, f.firedOnce, f.firedOutsideChanged == 0 else {
            throw BenchError("\(engineName.rawValue): \(f.fired) observers told (once each: \(f.firedOnce), "
                             + "\(f.firedOutsideChanged) of unchanged objects) for \(changed.count) changed")
        }
        var r = ObjectsRunResult(workload: ObjectsWorkload.observe.rawValue, engine: engineName.rawValue, ops: changed.count,
                                 seconds: f.deliverySeconds, peakRSSBytes: Measure.peakRSSBytes(), digest: ObjectsDigest())
        r.digest.objects = f.observers
        r.observation = f
        return r
    }

    private func faults() throws -> ObjectsRunResult {
        let engine = try Engine.open(directory: directory, data: data)
        defer { try? engine.close() }
        let f = try engine.registerFaults(scale.faults)
        guard f.faults == f.count else { throw BenchError("\(engineName.rawValue): \(f.count - f.faults) of the faults fired") }
        var r = ObjectsRunResult(workload: ObjectsWorkload.faults.rawValue, engine: engineName.rawValue, ops: f.count,
                                 seconds: f.seconds, peakRSSBytes: Measure.peakRSSBytes(), digest: ObjectsDigest())
        r.digest.objects = f.count
        r.faults = f
        return r
    }
}
