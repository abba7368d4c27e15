import StrataStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
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
    package static func key(_ number: Int) -> [UInt8] {
        var digits = String(number)
        while digits.count < 6 { digits = "0" + digits }
        return Array("key-\(digits)".utf8)
    }

    /// Values: mostly 0–200 bytes; about one in eight 10–100 KB (overflow frames), half of
    /// those compressible.
    package static func value(_ rng: inout SplitMix64) -> [UInt8] {
        if rng.below(8) == 0 {
            let length = rng.int(10_000...100_000)
            if rng.chance(0.5) { return rng.bytes(length) }
            let base = UInt8(truncatingIfNeeded: rng.next())
            return [UInt8](unsafeUninitializedCapacity: length) { buffer, done in
                for i in 0..<length { buffer[i] = UInt8(truncatingIfNeeded: i / 64) &+ base }
                done = length
            }
        }
        return rng.bytes(rng.int(0...200))
    }

    /// The workload of `seed`: the same seed gives the same transactions and states.
    package static func make(seed: UInt64, transactions: Int = 50) -> CrashWorkload {
        var rng = SplitMix64(seed: seed)
        var workload = CrashWorkload()
        var model: StoreContent = [:]
        var committed = 0
        var rolledBack = false
        while committed < transactions {
            var step = Step()
            var draft = model
            func create(_ name: String) { step.ops.append(.createTree(name)); draft[name] = [:] }
            func drop(_ name: String) { step.ops.append(.dropTree(name)); draft[name] = nil }
            switch committed {
            case 0: create("alpha"); create("beta")
            case 12: create("gamma")
            case 17: create("delta")
            case 23: drop("delta")
            case 30: drop("beta")
            case 38: create("beta")
            default: break
            }
            let names = draft.keys.sorted()
            for _ in 0..<rng.int(1...8) {
                let tree = names[rng.below(names.count)]
                let existing = draft[tree] ?? [:]
                if rng.below(4) == 0, !existing.isEmpty {
                    let keys = existing.keys.sorted { compareKeyBytes($0, $1) < 0 }
                    let key = keys[rng.below(keys.count)]
                    step.ops.append(.delete(tree: tree, key: key))
                    draft[tree]?[key] = nil
                } else {
                    let key = key(rng.below(150))
                    let value = value(&rng)
                    step.ops.append(.put(tree: tree, key: key, value: value))
                    draft[tree]?[key] = value
                }
            }
            if committed == 20 && !rolledBack {
                // A rolled-back transaction with a large value: garbage frames in the log.
                rolledBack = true
                var rolledBackStep = Step()
                rolledBackStep.rollback = true
                rolledBackStep.ops = [.put(tree: "alpha", key: key(7), value: rng.bytes(30_000)),
                                      .delete(tree: "alpha", key: key(1))]
                workload.steps.append(rolledBackStep)
            }
            model = draft
            committed += 1
            step.compactAfter = committed == transactions / 2
            workload.steps.append(step)
            workload.states.append(model)
        }
        return workload
    }

    /// Applies `step`'s changes in `tx` (it does not roll back: the caller throws for that).
    /// Throws ``CrashWorkloadFailure`` when a tree the workload expects is missing.
    package static func apply(_ step: Step, _ tx: WriteTransaction) throws {
        for op in step.ops {
            switch op {
            case .put(let name, let key, let value):
                guard let tree = try tx.tree(name) else {
                    throw CrashWorkloadFailure("tree '\(name)' missing in the workload")
                }
                try tree.put(key, value)
            case .delete(let name, let key):
                guard let tree = try tx.tree(name) else {
                    throw CrashWorkloadFailure("tree '\(name)' missing in the workload")
                }
                _ = try tree.delete(key)
            case .createTree(let name): try tx.createTree(name)
            case .dropTree(let name): try tx.dropTree(name)
            }
        }
    }
}

/// `memcmp` order, shorter first on a tie (the store's key order): negative, zero or positive.
package func compareKeyBytes(_ lhs: [UInt8], _ rhs: [UInt8]) -> Int {
    lhs.withUnsafeBytes { lhsBytes in
        rhs.withUnsafeBytes { rhsBytes in
            let n = min(lhsBytes.count, rhsBytes.count)
            if n > 0 {
                let order = memcmp(lhsBytes.baseAddress!, rhsBytes.baseAddress!, n)
                if order != 0 { return order < 0 ? -1 : 1 }
            }
            return lhsBytes.count == rhsBytes.count ? 0 : (lhsBytes.count < rhsBytes.count ? -1 : 1)
        }
    }
}

/// The store did not hold what a workload expects (not a `StrataError`: the harness saw it).
package struct CrashWorkloadFailure: Error, CustomStringConvertible {
    /// What was missing.
    package let description: String
    /// A failure described by `description`.
    package init(_ description: String) { self.description = description }
}
