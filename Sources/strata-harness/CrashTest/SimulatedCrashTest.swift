import ArgumentParser
import Foundation
import StrataStorage
import StrataTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
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
        var options = StoreOptions(durability: durability)
        options.fileSystem = fs
        // No timer syncs: a run is the same every time.
        options.syncIntervalMilliseconds = 3_600_000
        options.compactOnCloseGarbageRatio = 1
        options.checkpointLogBytes = 8 << 10
        options.checkpointDirtyBytes = 96 << 10
        options.checkpointStepPages = 3  // checkpoints spread over several commits, crashes between
        options.cacheBytes = 8 << 20
        return options
    }

    /// Round `round`: durability alternates every round; rounds `4j` and `4j+2` share a workload
    /// (`full`), as do `4j+1` and `4j+3` (`normal`); the first of each pair forks, the second
    /// stops the I/O at a point drawn over the call count the first one measured.
    func plan(_ round: Int) -> (workloadSeed: UInt64, durability: Durability, mechanism: Mechanism, pairKey: Int) {
        let pairKey = round / 4 * 2 + round % 2
        return (mixSeed(seed, UInt64(pairKey), 0x5752_4B4C), round % 2 == 0 ? .full : .normal,
                (round / 2) % 2 == 0 ? .fork : .stop, pairKey)
    }

    func run() -> CrashCounts {
        var counts = CrashCounts()
        var workloads: [Int: DigestedWorkload] = [:]
        var callCounts: [Int: Int] = [:]
        var recovered: [Int: Int] = [:]
        let start = monotonicSeconds()
        let range = only.map { $0...$0 } ?? 0...(rounds - 1)
        for round in range {
            let roundPlan = plan(round)
            if workloads[roundPlan.pairKey] == nil {
                workloads = workloads.filter { $0.key >= roundPlan.pairKey - 2 }
                workloads[roundPlan.pairKey] = DigestedWorkload(CrashWorkload.make(seed: roundPlan.workloadSeed))
            }
            let workload = workloads[roundPlan.pairKey]!
            let crashSeed = mixSeed(seed, UInt64(round), 0xC4A5)
            var label = ""
            let verdict: CrashVerdict
            switch roundPlan.mechanism {
            case .fork:
                let (roundVerdict, calls, roundLabel) = forkRound(workload, durability: roundPlan.durability,
                                                                  crashSeed: crashSeed)
                verdict = roundVerdict
                label = roundLabel
                callCounts[roundPlan.pairKey] = calls
            case .stop:
                var calls = callCounts[roundPlan.pairKey] ?? 0
                if calls == 0 { calls = measureCalls(workload, durability: roundPlan.durability) }
                var rng = SplitMix64(seed: mixSeed(crashSeed, 1))
                let stopAt = rng.below(calls)
                let (roundVerdict, roundLabel) = stopRound(workload, durability: roundPlan.durability, after: stopAt,
                                                           of: calls, crashSeed: crashSeed)
                verdict = roundVerdict
                label = roundLabel
            }
            if verbose { printError("round \(round) \(roundPlan.durability) \(label): \(verdict)") }
            if case .ok(let state) = verdict { recovered[state, default: 0] += 1 }
            counts.record(verdict, "round \(round) (seed \(seed), \(roundPlan.durability), \(label); "
                          + "rerun: strata-harness crash-test --seed \(seed) --only \(round))")
            if (round + 1) % 1000 == 0 && only == nil {
                let elapsed = monotonicSeconds() - start
                printError("crash-test: \(round + 1)/\(rounds) rounds, \(counts.lost) lost, \(counts.corrupt) corrupt, "
                           + "\(counts.unrecoverable) unrecoverable (\(String(format: "%.1f", elapsed))s, "
                           + "\(String(format: "%.0f", Double(round + 1) / elapsed)) rounds/s)")
            }
        }
        let elapsed = monotonicSeconds() - start
        let finalStateRounds = recovered.filter { $0.key >= 50 }.values.reduce(0, +)
        printError("crash-test: recoveries reached \(recovered.count) distinct committed states "
                   + "(\(recovered[0] ?? 0) rounds the empty start, \(finalStateRounds) the final state)")
        printError("crash-test: \(counts.rounds) rounds in \(String(format: "%.1f", elapsed))s "
                   + "(\(String(format: "%.1f", Double(counts.rounds) / max(elapsed, 1e-9))) rounds/s)")
        return counts
    }

    /// Runs the workload on `fs` until it ends or the file system's armed crash point trips.
    /// The store is released before returning (its handles die with the crash that follows).
    static func runWorkload(_ workload: DigestedWorkload, fs: SimulatedFileSystem, durability: Durability,
                            progress: CrashProgress) -> (any Error)? {
        do {
            let store = try Store(path: path, options: options(fs, durability))
            var committed = 0
            for step in workload.steps {
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
    func measureCalls(_ workload: DigestedWorkload, durability: Durability) -> Int {
        let fs = SimulatedFileSystem()
        _ = SimulatedCrashTest.runWorkload(workload, fs: fs, durability: durability, progress: CrashProgress())
        return max(1, fs.mutationCount)
    }

    /// Runs the whole workload, keeping a fork of the file system at one uniformly chosen
    /// mutating call; crashes the fork and verifies it. Returns the run's call count.
    func forkRound(_ workload: DigestedWorkload, durability: Durability,
                   crashSeed: UInt64) -> (CrashVerdict, Int, String) {
        let fs = SimulatedFileSystem()
        let progress = CrashProgress()
        let reservoir = CrashReservoir(seed: mixSeed(crashSeed, 2))
        fs.onMutation { callNumber, kind in
            reservoir.calls = callNumber
            if reservoir.rng.next() % UInt64(callNumber) == 0 {
                reservoir.image = fs.clone()
                reservoir.point = callNumber
                reservoir.kind = kind
                reservoir.low = progress.low
                reservoir.high = progress.high
            }
        }
        let failure = SimulatedCrashTest.runWorkload(workload, fs: fs, durability: durability, progress: progress)
        fs.onMutation(nil)
        let label = "\(Mechanism.fork.rawValue) \(reservoir.point) of \(reservoir.calls) (after \(reservoir.kind))"
        if let failure {
            return (CrashVerdict.from(failure, "the workload itself failed without a crash"), reservoir.calls, label)
        }
        // The run itself must end with every transaction.
        do {
            let store = try Store(path: SimulatedCrashTest.path, options: SimulatedCrashTest.options(fs, durability))
            let content = try store.read { try digestContent($0) }
            try store.close()
            if content != workload.states.last! {
                return (.corrupt("the uncrashed run ended with \(content.summary), "
                                 + "expected \(workload.states.last!.summary)"), reservoir.calls, label)
            }
        } catch {
            return (CrashVerdict.from(error, "reopening the uncrashed run"), reservoir.calls, label)
        }
        guard let image = reservoir.image else { return (.ok(state: 0), reservoir.calls, label) }
        let summary = image.crash(seed: crashSeed)
        let verdict = SimulatedCrashTest.verify(image, workload, low: reservoir.low, high: reservoir.high,
                                                durability: durability)
        return (verdict, reservoir.calls, label + ", crash \(summary)")
    }

    /// Runs the workload with the I/O stopped after `stopAt` mutating calls (every later call
    /// fails), crashes the file system and verifies it.
    func stopRound(_ workload: DigestedWorkload, durability: Durability, after stopAt: Int, of calls: Int,
                   crashSeed: UInt64) -> (CrashVerdict, String) {
        let fs = SimulatedFileSystem()
        let progress = CrashProgress()
        fs.crashAfter(operations: stopAt)
        let failure = SimulatedCrashTest.runWorkload(workload, fs: fs, durability: durability, progress: progress)
        var label = "\(Mechanism.stop.rawValue)(\(stopAt)) of about \(calls) calls"
            + (fs.hasCrashed ? "" : ", run ended first")
        if let failure { return (CrashVerdict.from(failure, "the workload failed before its crash point"), label) }
        let summary = fs.crash(seed: crashSeed)
        label += ", crash \(summary)"
        return (SimulatedCrashTest.verify(fs, workload, low: progress.low, high: progress.high, durability: durability),
                label)
    }

    /// Opens a post-crash file system and checks everything the crash model promises.
    static func verify(_ fs: SimulatedFileSystem, _ workload: DigestedWorkload, low: Int, high: Int,
                       durability: Durability) -> CrashVerdict {
        // A read-only open first: it must write nothing and see what the writer recovers.
        var readOnlyContent: ContentDigest?
        let mutationsBefore = fs.mutationCount
        do {
            var readOnlyOptions = options(fs, durability)
            readOnlyOptions.readOnly = true
            let reader = try Store(path: path, options: readOnlyOptions)
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
                return .corrupt("read-only open saw \(readOnlyContent.summary), "
                                + "the writer's recovery \(content.summary)")
            }
            guard let state = (low...high).first(where: { workload.states[$0] == content }) else {
                if let recovered = workload.states.indices.first(where: { workload.states[$0] == content }) {
                    if recovered < low {
                        return .lost("recovered state \(recovered), but states up to \(low) were acknowledged "
                                     + "(allowed \(low)...\(high))")
                    }
                    return .corrupt("recovered state \(recovered), beyond the last commit started (\(high))")
                }
                return .corrupt("recovered content is no committed state "
                                + "(\(content.summary); state \(low): \(workload.states[low].summary))")
            }
            let report = try store.check()
            if !report.isClean {
                return .corrupt("check after recovery to state \(state): \(report.problems.joined(separator: "; "))")
            }
            let value = Array("v\(state)".utf8)
            try store.write { tx in try tx.treeCreatingIfMissing(probeTree).put(Array("k".utf8), value) }
            try store.close()
            let again = try Store(path: path, options: options(fs, durability))
            var expected = workload.states[state]
            let probeSum = Array("k".utf8).withUnsafeBytes { entryHash(key: $0, valueHash: hashBytes(value)) }
            expected.trees[probeTree] = ContentDigest.Tree(count: 1, sum: probeSum)
            let after = try again.read { try digestContent($0) }
            try again.close()
            if after != expected {
                return .corrupt("write after recovery to state \(state) did not survive close+reopen: \(after.summary)")
            }
            return .ok(state: state)
        } catch {
            return CrashVerdict.from(error, "recovery")
        }
    }
}

/// A crash workload with its states digested once (rounds compare digests, not whole contents).
struct DigestedWorkload {
    let steps: [CrashWorkload.Step]
    let states: [ContentDigest]

    init(_ workload: CrashWorkload) {
        steps = workload.steps
        states = workload.states.map { ContentDigest(content: $0) }
    }
}

/// The bounds a post-crash state must fall in, as of the moment of the crash.
final class CrashProgress: @unchecked Sendable {
    /// Every state up to this index must survive (acknowledged `full` commits; `normal`
    /// commits once a checkpoint, compaction or close synced them).
    var low = 0
    /// No state beyond this one can exist (the commit in flight, if any).
    var high = 0
}

/// Reservoir sampling of one crash point over a run's mutating calls: call `n` replaces the
/// kept fork with probability 1/n, so each call is chosen with probability 1/(calls).
final class CrashReservoir: @unchecked Sendable {
    var rng: SplitMix64
    var image: SimulatedFileSystem?
    var point = 0
    var kind = SimulatedFileSystem.Operation.write
    var low = 0
    var high = 0
    var calls = 0
    init(seed: UInt64) { rng = SplitMix64(seed: seed) }
}

/// Thrown inside a workload step that rolls back.
struct CrashRollback: Error {}
