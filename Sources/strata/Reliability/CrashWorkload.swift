import StrataStorage
import StrataTesting

// The crash test's workload: seeded transactions and the state after each.

/// A seeded workload of write transactions and the expected content after each commit.
struct CrashWorkload {
    enum Op {
        case put(tree: String, key: [UInt8], value: [UInt8])
        case delete(tree: String, key: [UInt8])
        case createTree(String)
        case dropTree(String)
    }

    struct Step {
        var ops: [Op] = []
        /// The transaction throws at the end: its changes (overflow frames included) are discarded.
        var rollback = false
        /// `store.compact()` runs after this step.
        var compactAfter = false
    }

    var steps: [Step] = []
    /// `states[i]`: the content after the first `i` committed steps.
    var states: [ContentDigest] = []
    var models: [[String: [[UInt8]: UInt64]]] = []

    static func key(_ i: Int) -> [UInt8] {
        var s = String(i)
        while s.count < 6 { s = "0" + s }
        return Array("key-\(s)".utf8)
    }

    /// Values: mostly 0–200 bytes; about one in eight 10–100 KB (overflow frames), half of
    /// those compressible.
    static func value(_ rng: inout SplitMix64) -> [UInt8] {
        if rng.below(8) == 0 {
            let n = rng.int(10_000...100_000)
            if rng.chance(0.5) { return rng.bytes(n) }
            let b = UInt8(truncatingIfNeeded: rng.next())
            return [UInt8](unsafeUninitializedCapacity: n) { buf, done in
                for i in 0..<n { buf[i] = UInt8(truncatingIfNeeded: i / 64) &+ b }
                done = n
            }
        }
        return rng.bytes(rng.int(0...200))
    }

    static func make(seed: UInt64, transactions: Int = 50) -> CrashWorkload {
        var rng = SplitMix64(seed: seed)
        var w = CrashWorkload()
        var model: [String: [[UInt8]: UInt64]] = [:]
        w.models.append(model)
        w.states.append(ContentDigest(model: model))
        var committed = 0
        var rolledBack = false
        while committed < transactions {
            var step = Step()
            var m = model
            func create(_ name: String) { step.ops.append(.createTree(name)); m[name] = [:] }
            func drop(_ name: String) { step.ops.append(.dropTree(name)); m[name] = nil }
            switch committed {
            case 0: create("alpha"); create("beta")
            case 12: create("gamma")
            case 17: create("delta")
            case 23: drop("delta")
            case 30: drop("beta")
            case 38: create("beta")
            default: break
            }
            let names = m.keys.sorted()
            for _ in 0..<rng.int(1...8) {
                let tree = names[rng.below(names.count)]
                let existing = m[tree]!
                if rng.below(4) == 0, !existing.isEmpty {
                    let keys = existing.keys.sorted { compareKeyBytes($0, $1) < 0 }
                    let k = keys[rng.below(keys.count)]
                    step.ops.append(.delete(tree: tree, key: k))
                    m[tree]![k] = nil
                } else {
                    let k = key(rng.below(150))
                    let v = value(&rng)
                    step.ops.append(.put(tree: tree, key: k, value: v))
                    m[tree]![k] = hashBytes(v)
                }
            }
            if committed == 20 && !rolledBack {
                // A rolled-back transaction with a large value: garbage frames in the log.
                rolledBack = true
                var r = Step()
                r.rollback = true
                r.ops = [.put(tree: "alpha", key: key(7), value: rng.bytes(30_000)), .delete(tree: "alpha", key: key(1))]
                w.steps.append(r)
            }
            model = m
            committed += 1
            step.compactAfter = committed == transactions / 2
            w.steps.append(step)
            w.models.append(model)
            w.states.append(ContentDigest(model: model))
        }
        return w
    }

    static func apply(_ step: Step, _ tx: WriteTransaction) throws {
        for op in step.ops {
            switch op {
            case .put(let t, let k, let v):
                guard let tree = try tx.tree(t) else { throw HarnessFailure("tree '\(t)' missing in the workload") }
                try tree.put(k, v)
            case .delete(let t, let k):
                guard let tree = try tx.tree(t) else { throw HarnessFailure("tree '\(t)' missing in the workload") }
                _ = try tree.delete(k)
            case .createTree(let t): try tx.createTree(t)
            case .dropTree(let t): try tx.dropTree(t)
            }
        }
    }
}

struct CrashRollback: Error {}

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
