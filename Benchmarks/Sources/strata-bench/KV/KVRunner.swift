/// Runs one workload on one engine. Generic over the engine so each engine's calls are
/// specialised; batching (1,000 operations per transaction) lives here, once for all engines.
struct KVRunner<Engine: KVEngine> {
    static var batchSize: Int { 1_000 }

    let data: KVData
    /// The directory this run owns (fills create their store here).
    let directory: String
    /// The store fillrandom left, for the workloads that start from it.
    let filledStore: String?
    /// Commits in fillsync.
    let syncCommits: Int

    func run(_ workload: KVWorkload) throws -> KVRunResult {
        switch workload {
        case .fillseq: return try fill(workload, order: data.sequentialOrder())
        case .fillrandom: return try fill(workload, order: data.shuffledOrder(seed: KVSeeds.fillOrder))
        case .readrandom: return try readRandom()
        case .readseq: return try readSeq(warm: false)
        case .readseqWarm: return try readSeq(warm: true)
        case .fillsync: return try fillSync()
        case .deleterandom: return try deleteRandom()
        }
    }

    private func result(_ w: KVWorkload, ops: Int, start: UInt64, end: UInt64, checksum: Int) -> KVRunResult {
        KVRunResult(core: RunCore(workload: w.name, engine: Engine.name, ops: ops, seconds: Double(end - start) / 1e9),
                    details: KVRunDetails(checksum: checksum))
    }

    /// Calls `body` with successive slices of `order` of at most `batchSize` indices; a timed
    /// loop names its workload, for the progress lines.
    private func batches(_ order: [UInt32], timing w: KVWorkload? = nil,
                         _ body: (UnsafeBufferPointer<UInt32>, Int) throws -> Void) rethrows {
        var progress = w.map { ProgressMeter("\($0.rawValue) \(Engine.name)", total: order.count) }
        try order.withUnsafeBufferPointer { all in
            var i = 0
            while i < all.count {
                let end = min(i + Self.batchSize, all.count)
                try body(UnsafeBufferPointer(rebasing: all[i..<end]), i)
                i = end
                progress?.update(done: i)
            }
        }
    }

    /// Closes the engine, timing the close, and measures what it left on disk. Then, untimed,
    /// checks the closed store where the engine has a check (Strata). Peak RSS is taken before
    /// the check, so the check's own memory is not charged to the workload.
    private func closeAndMeasure(_ engine: Engine, _ r: inout KVRunResult, directory: String) throws {
        try r.core.close({
            do { try engine.close() } catch { throw BenchError("\(Engine.name): close: \(error)") }
        }, leaving: directory, check: { Engine.checkStore(directory: directory) })
    }

    private func fill(_ w: KVWorkload, order: [UInt32]) throws -> KVRunResult {
        let engine = try Engine.open(directory: directory, mode: .relaxed)
        Measure.resetPeakRSS()
        let t0 = Measure.now()
        try batches(order, timing: w) { batch, first in
            do { try engine.put(batch, firstOp: first, data: data) } catch {
                throw BenchError("\(Engine.name): \(w.rawValue): batch at op \(first): \(error)")
            }
        }
        let t1 = Measure.now()
        var r = result(w, ops: order.count, start: t0, end: t1, checksum: order.count)
        try closeAndMeasure(engine, &r, directory: directory)
        return r
    }

    private func requireFilledStore() throws -> String {
        guard let filledStore else { throw BenchError("\(Engine.name): this workload needs --filled-store") }
        return filledStore
    }

    /// Opens fillrandom's store, saying so if that is what fails (a failed fill leaves none).
    private func openFilled(_ path: String) throws -> Engine {
        do { return try Engine.open(directory: path, mode: .relaxed) } catch {
            throw BenchError("\(Engine.name): opening fillrandom's store: \(error)")
        }
    }

    private func readRandom() throws -> KVRunResult {
        let engine = try openFilled(try requireFilledStore())
        defer { try? engine.close() }
        let keys = data.randomIndices(data.count, seed: KVSeeds.readKeys)
        // Untimed warm-up: one get of every key, so caches (the engine's and the OS's) are in
        // the same warm state for every engine.
        var warm = 0
        try batches(data.sequentialOrder()) { batch, _ in warm += try engine.get(batch, data: data).found }
        guard warm == data.count else { throw BenchError("\(Engine.name): warm-up found \(warm) of \(data.count) keys") }
        Measure.resetPeakRSS()
        var found = 0, bytes = 0
        let t0 = Measure.now()
        try batches(keys, timing: .readrandom) { batch, _ in
            let r = try engine.get(batch, data: data)
            found += r.found
            bytes += r.bytes
        }
        let t1 = Measure.now()
        guard found == keys.count else { throw BenchError("\(Engine.name): readrandom found \(found) of \(keys.count)") }
        return result(.readrandom, ops: keys.count, start: t0, end: t1, checksum: bytes)
    }

    /// A full scan in key order; `warm`: the second of two on the same open store (the first,
    /// untimed, leaves the engine's caches as a long-running application's would be).
    private func readSeq(warm: Bool) throws -> KVRunResult {
        let workload: KVWorkload = warm ? .readseqWarm : .readseq
        let engine = try openFilled(try requireFilledStore())
        defer { try? engine.close() }
        if warm {
            let (count, _) = try engine.scan()
            guard count == data.count else { throw BenchError("\(Engine.name): \(workload.rawValue) saw \(count) of \(data.count) entries first") }
        }
        Measure.resetPeakRSS()
        let t0 = Measure.now()
        let (count, bytes) = try engine.scan()
        let t1 = Measure.now()
        guard count == data.count else { throw BenchError("\(Engine.name): \(workload.rawValue) saw \(count) of \(data.count) entries") }
        return result(workload, ops: count, start: t0, end: t1, checksum: bytes)
    }

    private func fillSync() throws -> KVRunResult {
        let commits = min(syncCommits, data.count)
        let order = Array(data.shuffledOrder(seed: KVSeeds.syncKeys).prefix(commits))
        var latencies = [UInt64](repeating: 0, count: commits)
        let engine = try Engine.open(directory: directory, mode: .durable)
        Measure.resetPeakRSS()
        let syncs0 = engine.syncCount
        let t0 = Measure.now()
        var progress = ProgressMeter("fillsync \(Engine.name)", total: commits)
        try order.withUnsafeBufferPointer { all in
            for i in 0..<all.count {
                let s = Measure.now()
                try engine.put(UnsafeBufferPointer(rebasing: all[i..<i + 1]), firstOp: i, data: data)
                latencies[i] = Measure.now() - s
                progress.update(done: i + 1)
            }
        }
        let t1 = Measure.now()
        let syncs1 = engine.syncCount
        var r = result(.fillsync, ops: commits, start: t0, end: t1, checksum: commits)
        latencies.sort()
        r.core.p50Micros = Double(Measure.percentile(latencies, 0.50)) / 1e3
        r.core.p99Micros = Double(Measure.percentile(latencies, 0.99)) / 1e3
        r.details.commits = commits
        if let syncs0, let syncs1 { r.details.ownSyncs = syncs1 - syncs0 }
        try closeAndMeasure(engine, &r, directory: directory)
        return r
    }

    private func deleteRandom() throws -> KVRunResult {
        // Start from a copy of fillrandom's store, so the delete runs on the same layout and
        // no untimed refill inflates this process's peak RSS.
        try Measure.copyDirectory(try requireFilledStore(), to: directory)
        let victims = Array(data.shuffledOrder(seed: KVSeeds.deleteKeys).prefix(data.count / 2))
        let engine = try openFilled(directory)
        Measure.resetPeakRSS()
        var deleted = 0
        let t0 = Measure.now()
        try batches(victims, timing: .deleterandom) { batch, _ in deleted += try engine.delete(batch, data: data) }
        let t1 = Measure.now()
        guard deleted == victims.count else { throw BenchError("\(Engine.name): deleted \(deleted) of \(victims.count)") }
        var r = result(.deleterandom, ops: victims.count, start: t0, end: t1, checksum: deleted)
        try closeAndMeasure(engine, &r, directory: directory)
        return r
    }
}
