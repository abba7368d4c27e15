import Foundation

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

    /// Times `count` calls of `body`, together `ops` operations of `w` (for the progress lines).
    private func timed(_ w: ObjectsWorkload, _ count: Int, ops: Int, _ body: (Int) throws -> Void) throws -> Timing {
        try Timing.calls("\(w.rawValue) \(engineName.rawValue)", count, ops: ops, body)
    }

    private func result(_ w: ObjectsWorkload, ops: Int, _ timing: Timing) -> ObjectsRunResult {
        ObjectsRunResult(core: RunCore(workload: w.rawValue, engine: engineName.rawValue, ops: ops, timing: timing),
                         details: ObjectsRunDetails())
    }

    /// Untimed: the store's digest, then a timed close, the bytes left, and (Strata) the check.
    private func finish(_ engine: Engine, _ r: inout ObjectsRunResult) throws {
        r.details.store = try engine.digest()
        try r.core.close(engine.close, leaving: directory) { Engine.checkStore(directory: directory) }
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
        return try Engine.open(directory: directory, data: data, name: engineName)
    }

    private func insert() throws -> ObjectsRunResult {
        let engine = try Engine.open(directory: directory, data: data, name: engineName)
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
        let engine = try Engine.open(directory: try requireInsertStore(), data: data, name: engineName)
        defer { try? engine.close() }
        let warm = try body(engine)
        var read = ObjectsDigest()
        let t = try timed(w, 1, ops: 1) { _ in read = try body(engine) }
        guard read == warm else { throw BenchError("\(engineName.rawValue): \(w.rawValue) read \(read), then \(warm)") }
        var r = result(w, ops: read.objects, t)
        r.details.digest = read
        return r
    }

    private func fetchIndexed() throws -> ObjectsRunResult {
        let queries = data.skuQueries()
        let batches = (queries.count + scale.queryBatch - 1) / scale.queryBatch
        func batch(_ i: Int) -> ArraySlice<String> { queries[(i * scale.queryBatch)..<min(queries.count, (i + 1) * scale.queryBatch)] }
        let engine = try Engine.open(directory: try requireInsertStore(), data: data, name: engineName)
        defer { try? engine.close() }
        var warm = ObjectsDigest()
        for i in 0..<batches { let d = try engine.fetchBySKU(batch(i)); warm.objects += d.objects; warm.checksum &+= d.checksum }
        var read = ObjectsDigest()
        let t = try timed(.fetchindexed, batches, ops: queries.count) { i in let d = try engine.fetchBySKU(batch(i)); read.objects += d.objects; read.checksum &+= d.checksum }
        guard read == warm else { throw BenchError("\(engineName.rawValue): fetchindexed read \(read), then \(warm)") }
        var r = result(.fetchindexed, ops: queries.count, t)
        r.details.digest = read
        return r
    }

    private func traverse() throws -> ObjectsRunResult {
        let lists = (0..<scale.traversals).map { $0 % scale.lists }
        let engine = try Engine.open(directory: try requireInsertStore(), data: data, name: engineName)
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
        r.details.digest = read
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
        r.details.digest = read
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
        var core = RunCore(workload: ObjectsWorkload.observe.rawValue, engine: engineName.rawValue, ops: changed.count,
                           seconds: f.deliverySeconds)
        core.peakRSSBytes = Measure.peakRSSBytes()
        return ObjectsRunResult(core: core, details: ObjectsRunDetails(digest: ObjectsDigest(objects: f.observers), observation: f))
    }

    private func faults() throws -> ObjectsRunResult {
        let engine = try Engine.open(directory: directory, data: data, name: engineName)
        defer { try? engine.close() }
        let f = try engine.registerFaults(scale.faults)
        guard f.faults == f.count else { throw BenchError("\(engineName.rawValue): \(f.count - f.faults) of the faults fired") }
        var core = RunCore(workload: ObjectsWorkload.faults.rawValue, engine: engineName.rawValue, ops: f.count, seconds: f.seconds)
        core.peakRSSBytes = Measure.peakRSSBytes()
        return ObjectsRunResult(core: core, details: ObjectsRunDetails(digest: ObjectsDigest(objects: f.count), faults: f))
    }
}
