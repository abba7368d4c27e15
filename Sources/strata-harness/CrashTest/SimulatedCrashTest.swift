import ArgumentParser
import Foundation
import StrataStorage
import StrataTesting
#if canImport(Glibc)
import Glibc
#endif

struct SimulatedCrashTest {
    let seed: UInt64
    let rounds: Int
    let only: Int?
    let verbose: Bool
    static let path = "/db/store.strata"
    static let probeTree = "zz-after-crash"

    enum Mechanism: String { case fork = "fork at call", stop = "crashAfter" }

    static func options(_ fs: SimulatedFileSystem, _ durability: Durability) -> StoreOptions {
        var o = StoreOptions(durability: durability)
        o.fileSystem = fs
        // No timer syncs: a run is the same every time.
        o.syncIntervalMilliseconds = 3_600_000
        o.compactOnCloseGarbageRatio = 1
        o.checkpointLogBytes = 8 << 10
        o.checkpointDirtyBytes = 96 << 10
        o.checkpointStepPages = 3  // checkpoints spread over several commits, crashes between
        o.cacheBytes = 8 << 20
        return o
    }

    /// Round `r`: durability alternates every round; rounds `4j` and `4j+2` share a workload
    /// (`full`), as do `4j+1` and `4j+3` (`normal`); the first of each pair forks, the second
    /// stops the I/O at a point drawn over the call count the first one measured.
    func plan(_ r: Int) -> (workloadSeed: UInt64, durability: Durability, mechanism: Mechanism, pairKey: Int) {
        let pairKey = r / 4 * 2 + r % 2
        return (mixSeed(seed, UInt64(pairKey), 0x5752_4B4C), r % 2 == 0 ? .full : .normal,
                (r / 2) % 2 == 0 ? .fork : .stop, pairKey)
    }

    func run() -> CrashCounts {
        var counts = CrashCounts()
        var workloads: [Int: DigestedWorkload] = [:]
        var callCounts: [Int: Int] = [:]
        var recovered: [Int: Int] = [:]
        let start = monotonicSeconds()
        let range = only.map { $0...$0 } ?? 0...(rounds - 1)
        for r in range {
            let p = plan(r)
            if workloads[p.pairKey] == nil {
                workloads = workloads.filter { $0.key >= p.pairKey - 2 }
                workloads[p.pairKey] = DigestedWorkload(CrashWorkload.make(seed: p.workloadSeed))
            }
            let w = workloads[p.pairKey]!
            let crashSeed = mixSeed(seed, UInt64(r), 0xC4A5)
            var label = ""
            let verdict: CrashVerdict
            switch p.mechanism {
            case .fork:
                let (v, calls, l) = forkRound(w, durability: p.durability, crashSeed: crashSeed)
                verdict = v
                label = l
                callCounts[p.pairKey] = calls
            case .stop:
                var calls = callCounts[p.pairKey] ?? 0
                if calls == 0 { calls = measureCalls(w, durability: p.durability) }
                var rng = SplitMix64(seed: mixSeed(crashSeed, 1))
                let n = rng.below(calls)
                let (v, l) = stopRound(w, durability: p.durability, after: n, of: calls, crashSeed: crashSeed)
                verdict = v
                label = l
            }
            if verbose { printError("round \(r) \(p.durability) \(label): \(verdict)") }
            if case .ok(let i) = verdict { recovered[i, default: 0] += 1 }
            counts.record(verdict, "round \(r) (seed \(seed), \(p.durability), \(label); rerun: strata-harness crash-test --seed \(seed) --only \(r))")
            if (r + 1) % 1000 == 0 && only == nil {
                let t = monotonicSeconds() - start
                printError("crash-test: \(r + 1)/\(rounds) rounds, \(counts.lost) lost, \(counts.corrupt) corrupt, \(counts.unrecoverable) unrecoverable (\(String(format: "%.1f", t))s, \(String(format: "%.0f", Double(r + 1) / t)) rounds/s)")
            }
        }
        let t = monotonicSeconds() - start
        printError("crash-test: recoveries reached \(recovered.count) distinct committed states (\(recovered[0] ?? 0) rounds the empty start, \(recovered.filter { $0.key >= 50 }.values.reduce(0, +)) the final state)")
        printError("crash-test: \(counts.rounds) rounds in \(String(format: "%.1f", t))s (\(String(format: "%.1f", Double(counts.rounds) / max(t, 1e-9))) rounds/s)")
        return counts
    }

    /// Runs the workload on `fs` until it ends or the file system's armed crash point trips.
    /// The store is released before returning (its handles die with the crash that follows).
    static func runWorkload(_ w: DigestedWorkload, fs: SimulatedFileSystem, durability: Durability,
                            progress: CrashProgress) -> (any Error)? {
        do {
            let store = try Store(path: path, options: options(fs, durability))
            var committed = 0
            for step in w.steps {
                progress.high = step.rollback ? committed : committed + 1
                let checkpoints = store.statistics.checkpoints
                do {
                    try store.write { tx in
                        try CrashWorkload.apply(step, tx)
                        if step.rollback { throw CrashRollback() }
                    }
                } catch is CrashRollback {}
                if !step.rollback {
                    committed += 1
                    // `normal`: a checkpoint during the commit synced it (and all before it).
                    if durability == .full || store.statistics.checkpoints != checkpoints { progress.low = committed }
                }
                progress.high = committed
                if step.compactAfter {
                    try store.compact()
                    progress.low = committed
                }
            }
            try store.close()
            progress.low = committed
            return nil
        } catch {
            return fs.hasCrashed ? nil : error
        }
    }

    /// Mutating calls of a whole run (for a `crashAfter` round whose pair did not measure it).
    func measureCalls(_ w: DigestedWorkload, durability: Durability) -> Int {
        let fs = SimulatedFileSystem()
        _ = SimulatedCrashTest.runWorkload(w, fs: fs, durability: durability, progress: CrashProgress())
        return max(1, fs.mutationCount)
    }

    /// Runs the whole workload, keeping a fork of the file system at one uniformly chosen
    /// mutating call; crashes the fork and verifies it. Returns the run's call count.
    func forkRound(_ w: DigestedWorkload, durability: Durability, crashSeed: UInt64) -> (CrashVerdict, Int, String) {
        let fs = SimulatedFileSystem()
        let progress = CrashProgress()
        let reservoir = CrashReservoir(seed: mixSeed(crashSeed, 2))
        fs.onMutation { n, kind in
            reservoir.calls = n
            if reservoir.rng.next() % UInt64(n) == 0 {
                reservoir.image = fs.clone()
                reservoir.point = n
                reservoir.kind = kind
                reservoir.low = progress.low
                reservoir.high = progress.high
            }
        }
        let failure = SimulatedCrashTest.runWorkload(w, fs: fs, durability: durability, progress: progress)
        fs.onMutation(nil)
        let label = "\(Mechanism.fork.rawValue) \(reservoir.point) of \(reservoir.calls) (after \(reservoir.kind))"
        if let failure { return (CrashVerdict.from(failure, "the workload itself failed without a crash"), reservoir.calls, label) }
        // The run itself must end with every transaction.
        do {
            let store = try Store(path: SimulatedCrashTest.path, options: SimulatedCrashTest.options(fs, durability))
            let content = try store.read { try digestContent($0) }
            try store.close()
            if content != w.states.last! {
                return (.corrupt("the uncrashed run ended with \(content.summary), expected \(w.states.last!.summary)"), reservoir.calls, label)
            }
        } catch {
            return (CrashVerdict.from(error, "reopening the uncrashed run"), reservoir.calls, label)
        }
        guard let image = reservoir.image else { return (.ok(state: 0), reservoir.calls, label) }
        let summary = image.crash(seed: crashSeed)
        let verdict = SimulatedCrashTest.verify(image, w, low: reservoir.low, high: reservoir.high, durability: durability)
        return (verdict, reservoir.calls, label + ", crash \(summary)")
    }

    /// Runs the workload with the I/O stopped after `n` mutating calls (every later call
    /// fails), crashes the file system and verifies it.
    func stopRound(_ w: DigestedWorkload, durability: Durability, after n: Int, of calls: Int, crashSeed: UInt64) -> (CrashVerdict, String) {
        let fs = SimulatedFileSystem()
        let progress = CrashProgress()
        fs.crashAfter(operations: n)
        let failure = SimulatedCrashTest.runWorkload(w, fs: fs, durability: durability, progress: progress)
        var label = "\(Mechanism.stop.rawValue)(\(n)) of about \(calls) calls\(fs.hasCrashed ? "" : ", run ended first")"
        if let failure { return (CrashVerdict.from(failure, "the workload failed before its crash point"), label) }
        let summary = fs.crash(seed: crashSeed)
        label += ", crash \(summary)"
        return (SimulatedCrashTest.verify(fs, w, low: progress.low, high: progress.high, durability: durability), label)
    }

    /// Opens a post-crash file system and checks everything the crash model promises.
    static func verify(_ fs: SimulatedFileSystem, _ w: DigestedWorkload, low: Int, high: Int, durability: Durability) -> CrashVerdict {
        // A read-only open first: it must write nothing and see what the writer recovers.
        var readOnlyContent: ContentDigest?
        let mutationsBefore = fs.mutationCount
        do {
            var o = options(fs, durability)
            o.readOnly = true
            let reader = try Store(path: path, options: o)
            readOnlyContent = try reader.read { try digestContent($0) }
            try reader.close()
        } catch {
            // Acceptable only when nothing was committed durably: there may be no store yet.
            let noStore: Bool
            switch error as? StrataError {
            case .notAStrataFile?: noStore = true
            case .fileNotFound?: noStore = true
            default: noStore = false
            }
            if low > 0 || !noStore { return CrashVerdict.from(error, "read-only open") }
        }
        if fs.mutationCount != mutationsBefore { return .corrupt("the read-only open wrote to the file system") }
        do {
            let store = try Store(path: path, options: options(fs, durability))
            let content = try store.read { try digestContent($0) }
            if let readOnlyContent, readOnlyContent != content {
                return .corrupt("read-only open saw \(readOnlyContent.summary), the writer's recovery \(content.summary)")
            }
            guard let i = (low...high).first(where: { w.states[$0] == content }) else {
                if let j = w.states.indices.first(where: { w.states[$0] == content }) {
                    if j < low { return .lost("recovered state \(j), but states up to \(low) were acknowledged (allowed \(low)...\(high))") }
                    return .corrupt("recovered state \(j), beyond the last commit started (\(high))")
                }
                return .corrupt("recovered content is no committed state (\(content.summary); state \(low): \(w.states[low].summary))")
            }
            let report = try store.check()
            if !report.isClean { return .corrupt("check after recovery to state \(i): \(report.problems.joined(separator: "; "))") }
            let value = Array("v\(i)".utf8)
            try store.write { tx in try tx.tree(probeTree, createIfMissing: true)!.put(Array("k".utf8), value) }
            try store.close()
            let again = try Store(path: path, options: options(fs, durability))
            var expected = w.states[i]
            expected.trees[probeTree] = ContentDigest.Tree(count: 1, sum: Array("k".utf8).withUnsafeBytes { entryHash(key: $0, valueHash: hashBytes(value)) })
            let after = try again.read { try digestContent($0) }
            try again.close()
            if after != expected {
                return .corrupt("write after recovery to state \(i) did not survive close+reopen: \(after.summary)")
            }
            return .ok(state: i)
        } catch {
            return CrashVerdict.from(error, "recovery")
        }
    }
}
