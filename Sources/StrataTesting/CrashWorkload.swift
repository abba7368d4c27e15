import StrataStorage
#if canImport(Glibc)
import Glibc
#endif

/// A store's whole content: tree name → key → value.
package typealias StoreContent = [String: [[UInt8]: [UInt8]]]

/// The crash tests' workload (the suites' `CrashTests` and `strata-harness crash-test`): seeded
/// write transactions and the store's content after each commit.
///
/// Fifty committed transactions of 1–8 puts and deletes over trees that are created and dropped
/// along the way (`alpha`, `beta` at the start; `gamma` at 12; `delta` from 17 to 23; `beta`
/// dropped at 30 and created again at 38), values of 0–200 bytes and about one in eight of
/// 10–100 KB (overflow frames, half of them compressible), one rolled-back transaction with a
/// large value after commit 20 (garbage frames in the log), and a compaction half-way.
package struct CrashWorkload: Sendable {
    /// One change inside a transaction.
    package enum Op: Sendable {
        case put(tree: String, key: [UInt8], value: [UInt8])
        case delete(tree: String, key: [UInt8])
        case createTree(String)
        case dropTree(String)
    }

    /// One transaction.
    package struct Step: Sendable {
        /// The changes, applied in order.
        package var ops: [Op] = []
        /// The transaction throws at the end: its changes (overflow frames included) are discarded.
        package var rollback = false
        /// `store.compact()` runs after this step.
        package var compactAfter = false

        /// A step of `ops`, committed, with no compaction after it.
        package init(ops: [Op] = []) { self.ops = ops }
    }

    /// The transactions in order, the rolled-back one included.
    package var steps: [Step] = []
    /// `states[i]`: the content after the first `i` committed steps (rolled-back ones do not count).
    package var states: [StoreContent] = [[:]]

    /// `key-000042` for 42: keys of one width, so byte order is numeric order.
    package static func key(_ i: Int) -> [UInt8] {
        var s = String(i)
        while s.count < 6 { s = "0" + s }
        return Array("key-\(s)".utf8)
    }

    /// Values: mostly 0–200 bytes; about one in eight 10–100 KB (overflow frames), half of
    /// those compressible.
    package static func value(_ rng: inout SplitMix64) -> [UInt8] {
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

    /// The workload of `seed`: the same seed gives the same transactions and states.
    package static func make(seed: UInt64, transactions: Int = 50) -> CrashWorkload {
        var rng = SplitMix64(seed: seed)
        var w = CrashWorkload()
        var model: StoreContent = [:]
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
                let existing = m[tree] ?? [:]
                if rng.below(4) == 0, !existing.isEmpty {
                    let keys = existing.keys.sorted { compareKeyBytes($0, $1) < 0 }
                    let k = keys[rng.below(keys.count)]
                    step.ops.append(.delete(tree: tree, key: k))
                    m[tree]?[k] = nil
                } else {
                    let k = key(rng.below(150))
                    let v = value(&rng)
                    step.ops.append(.put(tree: tree, key: k, value: v))
                    m[tree]?[k] = v
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
            w.states.append(model)
        }
        return w
    }

    /// Applies `step`'s changes in `tx` (it does not roll back: the caller throws for that).
    /// Throws ``CrashWorkloadFailure`` when a tree the workload expects is missing.
    package static func apply(_ step: Step, _ tx: WriteTransaction) throws {
        for op in step.ops {
            switch op {
            case .put(let t, let k, let v):
                guard let tree = try tx.tree(t) else { throw CrashWorkloadFailure("tree '\(t)' missing in the workload") }
                try tree.put(k, v)
            case .delete(let t, let k):
                guard let tree = try tx.tree(t) else { throw CrashWorkloadFailure("tree '\(t)' missing in the workload") }
                _ = try tree.delete(k)
            case .createTree(let t): try tx.createTree(t)
            case .dropTree(let t): try tx.dropTree(t)
            }
        }
    }
}

/// `memcmp` order, shorter first on a tie (the store's key order): negative, zero or positive.
package func compareKeyBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
    a.withUnsafeBytes { pa in
        b.withUnsafeBytes { pb in
            let n = min(pa.count, pb.count)
            if n > 0 {
                let r = memcmp(pa.baseAddress!, pb.baseAddress!, n)
                if r != 0 { return r < 0 ? -1 : 1 }
            }
            return pa.count == pb.count ? 0 : (pa.count < pb.count ? -1 : 1)
        }
    }
}
