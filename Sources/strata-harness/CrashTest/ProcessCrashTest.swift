import ArgumentParser
import Foundation
import StrataStorage
import StrataTesting
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Real process kills

/// The writer's workload: step `s` (1, 2, …) is a pure function of the seed and `s`, so a
/// writer that restarts after a kill continues where the store says it stopped, and the
/// checker can compute every state. Tree "meta" holds the last step.
enum ProcessWorkload {
    static let metaTree = "meta"
    static let metaKey = Array("step".utf8)

    static func trees(atStep s: Int) -> [String] {
        var names = ["alpha", "beta", metaTree]
        if (5..<25).contains(s % 40) { names.append("gamma") }
        return names.sorted()
    }

    static func ops(seed: UInt64, step s: Int) -> [CrashWorkload.Op] {
        var rng = SplitMix64(seed: mixSeed(seed, UInt64(s), 0x5052_4F43))
        var ops: [CrashWorkload.Op] = []
        if s == 1 { ops += [.createTree("alpha"), .createTree("beta"), .createTree(metaTree)] }
        if s % 40 == 5 { ops.append(.createTree("gamma")) }
        if s % 40 == 25 { ops.append(.dropTree("gamma")) }
        let names = trees(atStep: s).filter { $0 != metaTree }
        for _ in 0..<rng.int(1...6) {
            let tree = names[rng.below(names.count)]
            if rng.below(4) == 0 {
                ops.append(.delete(tree: tree, key: CrashWorkload.key(rng.below(150))))
            } else {
                ops.append(.put(tree: tree, key: CrashWorkload.key(rng.below(150)), value: CrashWorkload.value(&rng)))
            }
        }
        ops.append(.put(tree: metaTree, key: metaKey, value: ReferenceFormat.littleEndianBytes(UInt64(s), width: 8)))
        return ops
    }

    /// Applies step `s` to a model (tree → key → value hash).
    static func apply(_ ops: [CrashWorkload.Op], to m: inout [String: [[UInt8]: UInt64]]) {
        for op in ops {
            switch op {
            case .put(let t, let k, let v): m[t]![k] = hashBytes(v)
            case .delete(let t, let k): m[t]![k] = nil
            case .createTree(let t): m[t] = [:]
            case .dropTree(let t): m[t] = nil
            }
        }
    }

    static func options() -> StoreOptions {
        var o = StoreOptions(durability: .full)
        o.checkpointLogBytes = 256 << 10
        o.checkpointDirtyBytes = 1 << 20
        o.cacheBytes = 16 << 20
        return o
    }
}

/// `strata-harness crash-test-writer --path P --seed S` (hidden): the writer `crash-test --process`
/// kills. Prints each step after its commit returned (durable: `full` durability), one per line.
struct CrashTestWriterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-test-writer", abstract: "Writer process for crash-test --process.", shouldDisplay: false)

    @Option var path: String
    @Option var seed: UInt64
    @Option(help: "Stop (closing the store) after this step.")
    var maxStep = 1_000_000

    func run() throws {
        let store = try Store(path: path, options: ProcessWorkload.options())
        var step = try store.read { tx -> Int in
            guard let v = try tx.tree(ProcessWorkload.metaTree)?.get(ProcessWorkload.metaKey), v.count == 8 else { return 0 }
            return Int(v.littleEndian(at: 0, width: 8))
        }
        while step < maxStep {
            step += 1
            let ops = ProcessWorkload.ops(seed: seed, step: step)
            try store.write { tx in try CrashWorkload.apply(CrashWorkload.Step(ops: ops), tx) }
            writeLineUnbuffered(String(step))
            if step % 50 == 0 { try store.compact() }
        }
        try store.close()
    }
}

struct ProcessCrashTest {
    let seed: UInt64
    let kills: Int
    let verbose: Bool

    /// Digests of the states after steps 0, 1, 2, …, computed as needed.
    final class States {
        let seed: UInt64
        var model: [String: [[UInt8]: UInt64]] = [:]
        var digests: [ContentDigest] = [ContentDigest()]
        init(seed: UInt64) { self.seed = seed }
        func digest(_ step: Int) -> ContentDigest {
            while digests.count <= step {
                ProcessWorkload.apply(ProcessWorkload.ops(seed: seed, step: digests.count), to: &model)
                digests.append(ContentDigest(model: model))
            }
            return digests[step]
        }
    }

    func run() throws -> CrashCounts {
        let dir = try makeTemporaryDirectory("strata-crash-test")
        let path = dir + "/store.strata"
        var counts = CrashCounts()
        let states = States(seed: seed)
        var rng = SplitMix64(seed: mixSeed(seed, 0x4B49_4C4C))
        let start = monotonicSeconds()
        var totalAcks = 0
        var verifiedStep = 0
        for k in 0..<kills {
            // Mostly mid-run; one kill in four within the writer's start (open, recovery, first commits).
            let delay = Double(rng.below(4) == 0 ? rng.int(0...15) : rng.int(10...400)) / 1000
            let child = try ChildProcess(arguments: ["crash-test-writer", "--path", path, "--seed", String(seed)])
            let began = monotonicSeconds()
            var lastAck = -1
            var acks = 0
            var firstAck: Int?
            func take(_ line: String) {
                if let s = Int(line) {
                    lastAck = max(lastAck, s)
                    acks += 1
                    if firstAck == nil { firstAck = s }
                }
            }
            while true {
                let left = delay - (monotonicSeconds() - began)
                if left <= 0 { break }
                if let line = child.readLine(timeoutMilliseconds: Int32(max(1, left * 1000))) { take(line) }
                else if child.atEOF { break }
            }
            child.kill()
            // Lines already written were acknowledged before the kill: read them to the end.
            while let line = child.readLine(timeoutMilliseconds: -1) { take(line) }
            let status = child.wait()
            totalAcks += acks
            let label = "kill \(k + 1) after \(String(format: "%.0f", delay * 1000))ms (\(acks) commits acknowledged, last step \(lastAck))"
            if status.signal != SIGKILL {
                counts.record(.unrecoverable("the writer ended by itself (\(status))"), label)
                continue
            }
            // Before the first acknowledgement of this writer, the store is where the last
            // check left it (or the writer's recovery, or an unacknowledged commit after it).
            let verdict = verify(path: path, states: states, low: max(lastAck, verifiedStep), acknowledged: lastAck >= 0)
            if case .ok(let step) = verdict { verifiedStep = step }
            if verbose { printError("\(label): \(verdict)") }
            counts.record(verdict, label)
        }
        let t = monotonicSeconds() - start
        printError("crash-test: \(kills) kills in \(String(format: "%.1f", t))s, \(totalAcks) acknowledged commits")
        if counts.lost + counts.corrupt + counts.unrecoverable == 0 {
            removeDirectory(dir)
        } else {
            printError("crash-test: store kept for inspection: \(path)")
        }
        return counts
    }

    /// The store must hold the state after a step ≥ `low` (the last acknowledged one, or the
    /// one the previous check found) and ≤ `low + 1` (the writer's commit in flight).
    func verify(path: String, states: States, low: Int, acknowledged: Bool) -> CrashVerdict {
        // The store's own step decides where the unacknowledged history stands: read it first.
        var readOnlyContent: ContentDigest?
        do {
            var o = ProcessWorkload.options()
            o.readOnly = true
            let reader = try Store(path: path, options: o)
            readOnlyContent = try reader.read { try digestContent($0) }
            try reader.close()
        } catch {
            // A writer killed before its first commit may leave no store, or an unfinished one.
            if low > 0 || access(path, F_OK) == 0 { return CrashVerdict.from(error, "read-only open") }
        }
        do {
            let store = try Store(path: path, options: ProcessWorkload.options())
            let (content, step) = try store.read { tx -> (ContentDigest, Int) in
                let c = try digestContent(tx)
                guard let v = try tx.tree(ProcessWorkload.metaTree)?.get(ProcessWorkload.metaKey), v.count == 8 else { return (c, 0) }
                return (c, Int(v.littleEndian(at: 0, width: 8)))
            }
            if let readOnlyContent, readOnlyContent != content {
                return .corrupt("read-only open saw \(readOnlyContent.summary), the writer's recovery \(content.summary)")
            }
            guard step <= low + 1 else {
                return .corrupt("the store says step \(step), but only \(low) was acknowledged (or found before) and one more started")
            }
            guard states.digest(step) == content else {
                return .corrupt("content after step \(step) is not the committed state of that step (\(content.summary) vs \(states.digest(step).summary))")
            }
            if step < low { return .lost("recovered step \(step), but step \(low) was \(acknowledged ? "acknowledged" : "found by the previous check")") }
            let report = try store.check()
            if !report.isClean { return .corrupt("check: \(report.problems.joined(separator: "; "))") }
            // A new write must survive close and reopen; then it is removed again, so the next
            // writer continues from the model's state.
            let value = Array("after step \(step)".utf8)
            try store.write { tx in try tx.tree(SimulatedCrashTest.probeTree, createIfMissing: true)!.put(Array("k".utf8), value) }
            try store.close()
            let again = try Store(path: path, options: ProcessWorkload.options())
            var expected = content
            expected.trees[SimulatedCrashTest.probeTree] = ContentDigest.Tree(count: 1, sum: Array("k".utf8).withUnsafeBytes { entryHash(key: $0, valueHash: hashBytes(value)) })
            let after = try again.read { try digestContent($0) }
            if after != expected {
                try? again.close()
                return .corrupt("a write after recovery did not survive close+reopen")
            }
            try again.write { tx in try tx.dropTree(SimulatedCrashTest.probeTree) }
            try again.close()
            return .ok(state: step)
        } catch {
            return CrashVerdict.from(error, "recovery")
        }
    }
}
