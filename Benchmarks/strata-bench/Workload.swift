/// The workloads, named as LevelDB's db_bench names them, in the order they run.
/// `readseq` scans a store just opened (every page read from the file and decompressed);
/// `readseq-warm` times a second full scan on the same open store, after an untimed first one.
enum Workload: String, CaseIterable, Codable, Sendable {
    case fillseq, fillrandom, readrandom, readseq
    case readseqWarm = "readseq-warm"
    case fillsync, deleterandom

    /// Workloads that start from the store fillrandom leaves behind.
    var needsFilledStore: Bool {
        self == .readrandom || self == .readseq || self == .readseqWarm || self == .deleterandom
    }
}

/// What one run of one workload on one engine measured; the child prints it as one JSON line.
struct RunResult: BenchRun {
    var workload: Workload
    var engine: String
    /// Operations timed (puts, gets, deletes, scanned entries, or commits for fillsync).
    var ops: Int
    var seconds: Double
    var p50Micros: Double?
    var p99Micros: Double?
    var bytes: Int?
    var closeMillis: Double?
    var peakRSSBytes: Int?
    /// The engine's own sync counter delta over the timed commits (Strata only).
    var ownSyncs: Int?
    var commits: Int?
    /// A value computed from every result (lengths summed), printed so no read can be elided.
    var checksum: Int
    /// Strata only, for workloads that leave a store: whether `Store.check()` of the closed
    /// store (reopened read-only, untimed) found it sound, and how many problems it reported.
    var checkClean: Bool?
    var checkProblems: Int?
    /// The first problems reported, for the report to list.
    var checkMessages: [String]?
    var repeatIndex: Int? = nil

    enum CodingKeys: String, CodingKey {
        case workload, engine, ops, seconds, p50Micros, p99Micros, bytes, closeMillis, peakRSSBytes, ownSyncs,
             commits, checksum
        case checkClean = "check_clean", checkProblems = "check_problems", checkMessages = "check_messages"
        case repeatIndex = "repeat"
    }
}

/// Runs one workload on one engine. Generic over the engine so each engine's calls are
/// specialised; batching (1,000 operations per transaction) lives here, once for all engines.
struct WorkloadRunner<Engine: KVEngine> {
    static var batchSize: Int { 1_000 }

    let data: KVData
    /// The directory this run owns (fills create their store here).
    let directory: String
    /// The store fillrandom left, for the workloads that start from it.
    let filledStore: String?
    /// Commits in fillsync.
    let syncCommits: Int

    func run(_ workload: Workload) throws -> RunResult {
        switch workload {
        case .fillseq: return try fill(workload, order: data.sequentialOrder())
        case .fillrandom: return try fill(workload, order: data.shuffledOrder(seed: Seeds.fillOrder))
        case .readrandom: return try readRandom()
        case .readseq: return try readSeq(warm: false)
        case .readseqWarm: return try readSeq(warm: true)
        case .fillsync: return try fillSync()
        case .deleterandom: return try deleteRandom()
        }
    }

    private func result(_ w: Workload, ops: Int, start: UInt64, end: UInt64, checksum: Int) -> RunResult {
        RunResult(workload: w, engine: Engine.name, ops: ops, seconds: Double(end - start) / 1e9,
                  checksum: checksum)
    }

    /// Calls `body` with successive slices of `order` of at most `batchSize` indices; a timed
    /// loop names its workload, for the progress lines.
    private func batches(_ order: [UInt32], timing w: Workload? = nil,
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
    private func closeAndMeasure(_ engine: Engine, _ r: inout RunResult, directory: String) throws {
        let c0 = Measure.now()
        do { try engine.close() } catch { throw BenchError("\(Engine.name): close: \(error)") }
        r.closeMillis = Double(Measure.now() - c0) / 1e6
        r.bytes = Measure.directoryBytes(directory)
        r.peakRSSBytes = Measure.peakRSSBytes()
        if let check = Engine.checkStore(directory: directory) {
            r.checkClean = check.isClean
            r.checkProblems = check.problems.count
            r.checkMessages = Array(check.problems.prefix(maxCheckMessages))
        }
    }

    private func fill(_ w: Workload, order: [UInt32]) throws -> RunResult {
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

    private func readRandom() throws -> RunResult {
        let engine = try openFilled(try requireFilledStore())
        defer { try? engine.close() }
        let keys = data.randomIndices(data.count, seed: Seeds.readKeys)
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
    private func readSeq(warm: Bool) throws -> RunResult {
        let workload: Workload = warm ? .readseqWarm : .readseq
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

    private func fillSync() throws -> RunResult {
        let commits = min(syncCommits, data.count)
        let order = Array(data.shuffledOrder(seed: Seeds.syncKeys).prefix(commits))
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
        r.p50Micros = Double(Measure.percentile(latencies, 0.50)) / 1e3
        r.p99Micros = Double(Measure.percentile(latencies, 0.99)) / 1e3
        r.commits = commits
        if let syncs0, let syncs1 { r.ownSyncs = syncs1 - syncs0 }
        try closeAndMeasure(engine, &r, directory: directory)
        return r
    }

    private func deleteRandom() throws -> RunResult {
        // Start from a copy of fillrandom's store, so the delete runs on the same layout and
        // no untimed refill inflates this process's peak RSS.
        try Measure.copyDirectory(try requireFilledStore(), to: directory)
        let victims = Array(data.shuffledOrder(seed: Seeds.deleteKeys).prefix(data.count / 2))
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
