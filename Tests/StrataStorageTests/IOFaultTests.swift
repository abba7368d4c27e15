import Synchronization
import Testing
@testable import StrataStorage

/// Every call of a small workload, of each kind, made to fail in each way: the error is a typed
/// `StrataError`, transactions are all-or-nothing, a failed sync makes the store refuse writes
/// until it is reopened, and nothing acknowledged is lost (`full` durability).
@Suite struct IOFaultTests {
    enum Step: CustomStringConvertible {
        case open, tx(Int), checkpoint, compact, close, reopen, readAll
        var description: String {
            switch self {
            case .open: return "open"
            case .tx(let k): return "transaction \(k)"
            case .checkpoint: return "checkpoint"
            case .compact: return "compact"
            case .close: return "close"
            case .reopen: return "reopen"
            case .readAll: return "read everything"
            }
        }
    }

    static let steps: [Step] = [.open, .tx(1), .tx(2), .checkpoint, .tx(3), .compact, .tx(4), .close, .reopen, .readAll]

    static func pattern(_ n: Int, _ seed: Int) -> [UInt8] {
        var rng = SeededRandom(seed: UInt64(seed))
        return relRandomBytes(n / 2, &rng) + [UInt8](repeating: UInt8(seed), count: n - n / 2)
    }

    /// Transaction `k` of the workload.
    static func body(_ k: Int, _ tx: WriteTransaction) throws {
        switch k {
        case 1:
            let t = try tx.createTree("t")
            for i in 0..<30 { try t.put(key(i), bytes("v1-\(i)")) }
            try t.put(bytes("big"), pattern(3_000, 1))
        case 2:
            let t = try tx.tree("t")!
            for i in 30..<40 { try t.put(key(i), bytes("v2-\(i)")) }
            for i in 0..<5 { try t.delete(key(i)) }
            try t.put(bytes("big"), pattern(4_000, 2))
        case 3:
            let u = try tx.createTree("u")
            for i in 0..<10 { try u.put(key(i), [UInt8](repeating: UInt8(i), count: 300)) }
            try tx.tree("t")!.put(key(7), bytes("v3"))
        default:
            let t = try tx.tree("t")!
            try t.put(bytes("big2"), pattern(5_000, 4))
            try t.delete(key(10))
            try tx.tree("u")!.put(key(99), bytes("v4"))
        }
    }

    /// `states[k]`: the content after transaction `k`.
    static let statesOrNil: [RelTrees]? = {
        do {
            let fs = SimulatedFileSystem()
            let store = try Store(path: relPath, options: relOptions(fs))
            var s = [try relReadAll(store)]
            for k in 1...4 {
                try store.write { try body(k, $0) }
                s.append(try relReadAll(store))
            }
            try store.close()
            return s
        } catch {
            print("IOFaultTests: the clean workload failed: \(error)")
            return nil
        }
    }()

    static var states: [RelTrees] { statesOrNil! }

    struct Outcome {
        var acked = 0
        var inFlight: Int?
        var failedStep: Step?
        var error: StrataError?
    }

    /// Runs the workload until the first error. Returns what happened and the store (if open).
    static func run(_ fs: SimulatedFileSystem, label: String) -> (Outcome, Store?) {
        var out = Outcome()
        var store: Store?
        for step in steps {
            do {
                switch step {
                case .open, .reopen: store = try Store(path: relPath, options: relOptions(fs))
                case .tx(let k):
                    out.inFlight = k
                    try store!.write { try body(k, $0) }
                    out.acked = k
                    out.inFlight = nil
                case .checkpoint: try store!.checkpoint()
                case .compact: try store!.compact()
                case .close:
                    let s = store!
                    store = nil
                    try s.close()
                case .readAll:
                    let content = try relReadAll(store!)
                    #expect(content == states[out.acked], "\(label): content after the whole workload")
                    let report = try store!.check()
                    #expect(relUnexpectedProblems(report).isEmpty, "\(label): \(report.problems)")
                }
            } catch let e as StrataError {
                out.failedStep = step
                out.error = e
                return (out, store)
            } catch {
                Issue.record("\(label): \(step) threw a non-Strata error \(error)")
                out.failedStep = step
                return (out, store)
            }
        }
        return (out, store)
    }

    /// A failed sync of the store file poisons the store: the step throws `poisoned`, whose
    /// cause is the sync's own error.
    static func isSyncFailure(_ e: StrataError, of path: String) -> Bool {
        guard case .poisoned(let cause) = e else { return false }
        switch cause {
        case .ioFailure(let op, let p, _): return op == "sync" && p == path
        case .diskFull(let p): return p == path
        default: return false
        }
    }

    enum Result { case absorbed, surfaced, knownBug }

    /// One faulted run, checked end to end.
    @discardableResult
    static func check(kind: SimulatedFileSystem.Operation, index: Int, fault: SimulatedFileSystem.Fault, crashSeed: UInt64?) -> Result {
        let label = "\(kind) call \(index) fails with \(fault)\(crashSeed.map { ", then crash seed \($0)" } ?? "")"
        let fs = SimulatedFileSystem()
        fs.failAt(kind, callIndex: index, fault: fault)
        let (out, openStore) = run(fs, label: label)
        guard let error = out.error, let step = out.failedStep else {
            // The fault was absorbed (a failed preallocation, a best-effort removal): the run
            // completed and checked its content.
            return .absorbed
        }
        // Known bug (failureAfterCompactionRenameLosesNoCommits): a failure after the rename.
        let renamedThenFailed = step.description == "compact" && kind != .rename && fs.count(of: .rename) > 0
        var result = Result.surfaced
        var allowed: Set<Int> = [out.acked]
        if let k = out.inFlight { allowed.insert(k) }
        var expected: RelTrees?
        var knownProbe: RelTrees?
        if let store = openStore {
            // In memory, the failed transaction is all or nothing too.
            var memory: RelTrees?
            do {
                memory = try relReadAll(store)
                if !allowed.contains(where: { states[$0] == memory! }) {
                    Issue.record("\(label): after \(step) failed (\(error)), the open store shows a state that is not \(allowed.sorted())")
                }
            } catch {
                // A read failing again is fine; the fault fired once, so this is unexpected.
                Issue.record("\(label): reading after the failure: \(error)")
            }
            // A failed sync of the store file fails the store: writes are refused until reopened.
            let probe: (WriteTransaction) throws -> Void = { tx in
                try tx.treeCreatingIfMissing("probe").put(bytes("p"), bytes("after \(step)"))
            }
            if kind == .sync && isSyncFailure(error, of: relPath) {
                do {
                    try store.write(probe)
                    Issue.record("\(label): a write after the failed sync succeeded")
                } catch StrataError.poisoned {
                } catch {
                    Issue.record("\(label): a write after the failed sync threw \(error), expected poisoned")
                }
                // Regression (found by `strata-harness crash-test`): close() returned normally on a
                // failed store, so a caller believed commits durable that were not.
                do {
                    try store.close()
                    Issue.record("\(label): close() after the failed sync returned normally")
                } catch {}
            } else if let memory {
                do {
                    try store.write(probe)
                    if renamedThenFailed && relTolerateKnownBugs {
                        result = .knownBug
                    } else {
                        expected = memory
                        expected!["probe"] = [bytes("p"): bytes("after \(step)")]
                    }
                } catch StrataError.poisoned {
                    // Only a failed sync may poison the store (a directory sync after compaction).
                    if kind != .sync && kind != .syncDirectory { Issue.record("\(label): \(kind) failing poisoned the store") }
                } catch {
                    Issue.record("\(label): a write after the failure threw \(error)")
                }
            }
            if let expected, (try? relReadAll(store)) != expected {
                Issue.record("\(label): the probe write is not visible")
            }
            if result == .knownBug, var withProbe = memory {
                withProbe["probe"] = [bytes("p"): bytes("after \(step)")]
                allowed = []
                expected = nil
                // Either the probe survived (bug fixed) or the compacted file without it shows.
                if let i = states.firstIndex(of: memory!) { allowed.insert(i) }
                knownProbe = withProbe
            }
            try? store.close()
        }
        fs.clearFaults()
        if let crashSeed { fs.crash(seed: crashSeed) }
        do {
            let store = try Store(path: relPath, options: relOptions(fs))
            let content = try relReadAll(store)
            if let knownProbe, content == knownProbe {
                // The known bug did not bite.
            } else if let expected {
                #expect(content == expected, "\(label): after \(step) failed with \(error) and a later write was acknowledged, reopen shows \(relDiff(expected, content))")
            } else if !allowed.contains(where: { states[$0] == content }) {
                let which = states.firstIndex(of: content).map { "state \($0)" } ?? "no state of the workload"
                Issue.record("\(label): after \(step) failed with \(error), reopen shows \(which), allowed \(allowed.sorted())")
            }
            let report = try store.check()
            #expect(relUnexpectedProblems(report).isEmpty, "\(label): \(report.problems)")
            try store.write { try $0.treeCreatingIfMissing("again").put([1], [1]) }
            try store.close()
        } catch let e as StrataError where relTolerateKnownBugs && step.description == "open" && {
            if case .notAStrataFile = e { return true }
            if case .corrupt(let what, _) = e { return what.contains("both header slots") }
            return false
        }() {
            // Known bug (failedCreationLeavesAnOpenableFile).
            return .knownBug
        } catch {
            Issue.record("\(label): reopening after \(step) failed with \(error)")
        }
        return result
    }

    /// How many calls of each kind a clean run makes.
    static let cleanCounts: [SimulatedFileSystem.Operation: Int]? = {
        guard statesOrNil != nil else { return nil }
        let fs = SimulatedFileSystem()
        let (out, _) = run(fs, label: "clean run")
        guard out.error == nil && out.acked == 4 else {
            print("IOFaultTests: the clean run failed: \(String(describing: out.error))")
            return nil
        }
        return fs.counts
    }()

    static func sweep(_ kind: SimulatedFileSystem.Operation, _ faults: [SimulatedFileSystem.Fault]) {
        guard let cleanCounts else {
            Issue.record("the fault-free workload does not run")
            return
        }
        let n = cleanCounts[kind] ?? 0
        #expect(n > 0, "the workload makes no \(kind) call")
        var tally: [Result: Int] = [:]
        for fault in faults {
            for i in 1...max(1, n) {
                tally[check(kind: kind, index: i, fault: fault, crashSeed: nil), default: 0] += 1
                tally[check(kind: kind, index: i, fault: fault, crashSeed: UInt64(i) &* 31 &+ UInt64(kind.index)), default: 0] += 1
            }
        }
        print("IOFaultTests \(kind): \(n) calls × \(faults) = \(tally.values.reduce(0, +)) runs: \(tally[.surfaced] ?? 0) reported a typed error, \(tally[.absorbed] ?? 0) absorbed (run completed intact), \(tally[.knownBug] ?? 0) hit a known engine bug")
    }

    @Test func readFaults() { IOFaultTests.sweep(.read, [.ioError]) }
    @Test func writeFaults() { IOFaultTests.sweep(.write, [.ioError, .diskFull, .shortWrite(bytes: nil), .shortWrite(bytes: 41)]) }
    @Test func syncFaults() { IOFaultTests.sweep(.sync, [.ioError, .diskFull]) }
    @Test func truncateFaults() { IOFaultTests.sweep(.truncate, [.ioError, .diskFull]) }
    @Test func renameFaults() { IOFaultTests.sweep(.rename, [.ioError]) }
    @Test func openSizeAndRemoveFaults() {
        IOFaultTests.sweep(.open, [.ioError])
        IOFaultTests.sweep(.size, [.ioError])
        IOFaultTests.sweep(.remove, [.ioError])
    }

    @Test func syncDirectoryFaults() { IOFaultTests.sweep(.syncDirectory, [.ioError]) }

    /// Regression (was an engine bug in Store+Compaction.swift, `compactLocked`: everything after
    /// `try fs.rename(tmp, to: path)` — `fs.syncDirectory(containing:)` and the root loads
    /// `pageFile.page(at:level:)` from the new file): when one of them throws, `compact()`
    /// throws, but the rename has already replaced the store file. The store keeps its old
    /// `log`, appends later commits to the old, now unlinked file, acknowledges them (their
    /// fsync succeeds on the orphan) and they are gone at the next open: silent loss of `full`
    /// commits. Fix: after a successful rename, switch `log`/`sync`/`header` to the new file
    /// first (nothing after the rename may throw before the switch), and on a later failure
    /// fail the store (`sync.fail`) so it turns read-only until reopened.
    @Test func failureAfterCompactionRenameLosesNoCommits() throws {
        _ = try #require(IOFaultTests.statesOrNil)
        // (Page loads no longer ask for the file size, so a size fault cannot reach this path.)
        for (kind, suffix) in [(SimulatedFileSystem.Operation.syncDirectory, nil), (.read, ".compact")] as [(SimulatedFileSystem.Operation, String?)] {
            let fs = SimulatedFileSystem()
            let store = try Store(path: relPath, options: relOptions(fs))
            try store.write { try IOFaultTests.body(1, $0) }
            // The first such call after the rename.
            fs.failAt(kind, callIndex: fs.count(of: kind) + 1, fault: .ioError, pathSuffix: suffix)
            if kind != .syncDirectory { fs.failAlways(kind, pathSuffix: suffix) }
            #expect(throws: StrataError.self, "\(kind)") { try store.compact() }
            fs.clearFaults()
            var acknowledged = false
            do {
                try store.write { try IOFaultTests.body(2, $0) }
                acknowledged = true
            } catch StrataError.poisoned {
                // Also a correct answer after a failed directory sync: the store refuses writes
                // until reopened.
                #expect(kind == .syncDirectory, "\(kind) failing after compaction's rename poisoned the store")
            }
            try? store.close()
            let reopened = try Store(path: relPath, options: relOptions(fs))
            let content = try relReadAll(reopened)
            let expected = IOFaultTests.states[acknowledged ? 2 : 1]
            if content != expected {
                let shown = IOFaultTests.states.firstIndex(of: content).map { "the state after transaction \($0)" } ?? "no state of the workload"
                Issue.record("\(kind) failing after compaction's rename: transaction 2 was \(acknowledged ? "acknowledged" : "refused"), reopen shows \(shown) (\(relDiff(expected, content)))")
            }
            try reopened.close()
        }
    }

    /// Regression, fixed (was an engine bug in Recovery.swift, `create`/`initialize` + `chooseHeader`): when creating a new
    /// store fails part way (any write, truncate or sync error: a full disk, EIO), the file is
    /// left behind longer than 8192 bytes (preallocated zeros, maybe a checkpoint frame, maybe a
    /// torn header slot). Every later open fails with "not a Strata file" or "both header slots
    /// are damaged" although nothing was ever stored. Fix: create the file under a temporary
    /// name and rename it into place once complete (and/or treat a file with no valid header
    /// slot whose log holds only the initial empty checkpoint as an unfinished creation).
    @Test func failedCreationLeavesAnOpenableFile() throws {
        let probe = SimulatedFileSystem()
        try Store(path: relPath, options: relOptions(probe)).close()
        for kind in [SimulatedFileSystem.Operation.write, .truncate, .sync] {
            for i in 1...probe.count(of: kind) {
                for fault in [SimulatedFileSystem.Fault.ioError, .shortWrite(bytes: 41)] where kind == .write || fault == .ioError {
                    let fs = SimulatedFileSystem()
                    fs.failAt(kind, callIndex: i, fault: fault)
                    guard (try? Store(path: relPath, options: relOptions(fs))) == nil else { continue }
                    fs.clearFaults()
                    do {
                        let store = try Store(path: relPath, options: relOptions(fs))
                        #expect(try relReadAll(store).isEmpty)
                        try store.close()
                    } catch {
                        Issue.record("\(kind) call \(i) failing with \(fault) while creating the store: every later open fails with \(error)")
                    }
                }
            }
        }
    }

    /// Regression, fixed (was an engine bug in Store+Check.swift, `checkVersion`: `catch { report.problems.append("… overflow
    /// value at …: \(error)") }` and the same around `TreeRead.child`): an I/O error while
    /// `check()` reads an overflow value or a child page is reported as damage to the store
    /// (a problem line, so `isClean == false`) instead of being thrown. A transient EIO makes
    /// `strata check` declare a sound file corrupt. Fix: catch only `StrataError.corrupt`
    /// there; rethrow everything else.
    @Test func checkThrowsIOErrorsInsteadOfReportingDamage() throws {
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: relOptions(fs))
        try store.write { try IOFaultTests.body(1, $0) }
        try store.close()
        let reopened = try Store(path: relPath, options: relOptions(fs))
        let before = fs.count(of: .read)
        #expect(try reopened.check().isClean)
        let reads = fs.count(of: .read) - before
        try reopened.close()
        for i in 1...reads {
            let s = try Store(path: relPath, options: relOptions(fs))
            fs.failAt(.read, callIndex: fs.count(of: .read) + i)
            do {
                let report = try s.check()
                #expect(report.isClean, "read \(i) of \(reads) in check() failing: reported as damage \(report.problems)")
            } catch let e as StrataError {
                if case .ioFailure = e {} else { Issue.record("read \(i) failing: check threw \(e)") }
            }
            fs.clearFaults()
            try s.close()
        }
    }

    /// Regression: a full disk at a checkpoint's header write (a new store's first checkpoint is
    /// the first write into the unallocated block of header slot 1) failed the store as "read-only:
    /// a sync failed", and `check` then reported more live bytes than the file holds. Now the
    /// checkpoint throws `diskFull`, the store carries on, the next checkpoint succeeds, and the
    /// space totals stay consistent.
    @Test func fullDiskAtHeaderWriteDoesNotPoison() throws {
        for durability in [Durability.full, .normal] {
            let label = "\(durability)"
            func scenario(_ fs: SimulatedFileSystem) throws -> Store {
                let store = try Store(path: relPath, options: relOptions(fs, durability))
                try store.write { tx in
                    let t = try tx.createTree("t")
                    for i in 0..<500 { try t.put(key(i), bytes("value \(i)")) }
                    try t.put(bytes("big"), IOFaultTests.pattern(5_000, 3))
                }
                return store
            }
            // A first run finds which write of the checkpoint is the header slot's (the one that
            // changes slot 1); the run is deterministic, so the second run fails that one.
            let probe = SimulatedFileSystem()
            let probeStore = try scenario(probe)
            let writesBefore = probe.count(of: .write)
            let slot1 = Int(FileHeader.slotOffset(1))
            let found = Mutex<Int?>(nil)
            probe.onMutation { index, op in
                guard op == .write, found.withLock({ $0 }) == nil,
                      let bytes = probe.contents(of: relPath), bytes.count > slot1 + 8,
                      bytes[slot1..<slot1 + 8].contains(where: { $0 != 0 }) else { return }
                found.withLock { $0 = probe.count(of: .write) - writesBefore }
            }
            try probeStore.checkpoint()
            probe.onMutation(nil)
            try probeStore.close()
            let headerWrite = try #require(found.withLock { $0 }, "\(label): no checkpoint write reached header slot 1")

            let fs = SimulatedFileSystem()
            let store = try scenario(fs)
            fs.failAt(.write, callIndex: fs.count(of: .write) + headerWrite, fault: .diskFull)
            do {
                try store.checkpoint()
                Issue.record("\(label): the checkpoint did not fail")
            } catch StrataError.diskFull {
            }
            fs.clearFaults()
            #expect(store.statistics.checkpoints == 0)
            // The totals right after the failure (pages and an overflow frame beyond the
            // checkpoint the header still names) count nothing twice.
            let afterFailure = try store.check()
            #expect(afterFailure.isClean, "\(label): \(afterFailure.problems)")
            #expect(afterFailure.liveBytes <= afterFailure.fileBytes, "\(label): after the failure, live \(afterFailure.liveBytes) > file \(afterFailure.fileBytes)")
            let infoAfterFailure = try store.info()
            #expect(infoAfterFailure.liveBytes <= infoAfterFailure.logBytes, "\(label): after the failure, info live \(infoAfterFailure.liveBytes) > log \(infoAfterFailure.logBytes)")
            // Still usable: a commit, a checkpoint that writes the slot this time, the totals.
            try store.write { try $0.tree("t")!.put(bytes("after"), bytes("space came back")) }
            try store.checkpoint()
            let report = try store.check()
            #expect(report.isClean, "\(label): \(report.problems)")
            #expect(report.liveBytes <= report.fileBytes, "\(label): live \(report.liveBytes) > file \(report.fileBytes)")
            let info = try store.info()
            #expect(info.liveBytes <= info.logBytes, "\(label): info live \(info.liveBytes) > log \(info.logBytes)")
            try store.close()
            let reopened = try Store(path: relPath, options: relOptions(fs, durability))
            let content = try relReadAll(reopened)["t"]!
            #expect(content.count == 502 && content[bytes("after")] == bytes("space came back"), "\(label)")
            let again = try reopened.check()
            #expect(again.isClean && again.liveBytes <= again.fileBytes, "\(label): \(again.problems)")
            try reopened.close()
        }
    }

    /// A disk that fills up mid-commit (capacity, not an injected fault): the commit fails
    /// with `diskFull`, nothing committed before is lost, and once space is freed the store
    /// carries on without a reopen.
    @Test func diskFullMidCommitLosesNothing() throws {
        for durability in [Durability.full, .normal] {
            let fs = SimulatedFileSystem()
            var o = relOptions(fs, durability)
            o.checkpointLogBytes = 16 << 10
            o.checkpointStepPages = 2  // faults in the middle of a checkpoint spread over commits
            let store = try Store(path: relPath, options: o)
            var rng = SeededRandom(seed: 77)
            var model: [[UInt8]: [UInt8]] = [:]
            try store.write { tx in
                let t = try tx.createTree("t")
                for i in 0..<200 { let v = relRandomBytes(50, &rng); try t.put(key(i), v); model[key(i)] = v }
            }
            try store.checkpoint()
            // Room for a few more small commits, then the disk is full.
            let used = fs.fileNames.compactMap { fs.contents(of: $0)?.count }.reduce(0, +)
            fs.capacity = used + 3_000
            var full = 0
            for round in 0..<40 {
                do {
                    try store.write { tx in
                        let t = try tx.tree("t")!
                        for i in 0..<5 { try t.put(key(1000 + round * 5 + i), relRandomBytes(300, &rng)) }
                        try t.put(bytes("big\(round)"), relRandomBytes(40_000, &rng))
                    }
                    let snapshot = try relReadAll(store)["t"]!
                    model = snapshot
                } catch StrataError.diskFull {
                    full += 1
                    // Not applied in memory either.
                    #expect((try relReadAll(store))["t"]! == model, "\(durability) round \(round): failed commit visible")
                } catch StrataError.poisoned {
                    // Acceptable only after a failed sync; the injected capacity never fails a sync.
                    Issue.record("\(durability) round \(round): a full disk poisoned the store")
                    break
                }
            }
            #expect(full > 0, "\(durability): the disk never filled")
            fs.capacity = nil
            try store.write { try $0.tree("t")!.put(bytes("after"), bytes("space freed")) }
            model[bytes("after")] = bytes("space freed")
            try store.close()
            let reopened = try Store(path: relPath, options: relOptions(fs, durability))
            #expect(try relReadAll(reopened)["t"]! == model, "\(durability): reopen after a full disk")
            let report = try reopened.check()
            #expect(relUnexpectedProblems(report).isEmpty, "\(report.problems)")
            try reopened.close()
        }
    }
}
