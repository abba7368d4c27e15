import Foundation
import Testing
@testable import StrataStorage

/// Model-based testing: random operations on a store and on an in-memory sorted map, compared
/// at every read; snapshots pinned along the way are compared with the model as of their commit.
@Suite struct RandomOperationsTests {
    /// One tree of the model: keys sorted in memcmp order, values parallel (no hashing: fast
    /// in debug builds).
    struct ModelTree {
        var keys: [[UInt8]] = []
        var vals: [[UInt8]] = []

        var count: Int { keys.count }

        func value(_ k: [UInt8]) -> [UInt8]? {
            let i = lowerBound(k)
            return i < keys.count && relSame(keys[i], k) ? vals[i] : nil
        }

        /// First index whose key is ≥ `key`.
        func lowerBound(_ key: [UInt8]) -> Int {
            var lo = 0
            var hi = keys.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if compareBytes(keys[mid], key) < 0 { lo = mid + 1 } else { hi = mid }
            }
            return lo
        }

        mutating func put(_ k: [UInt8], _ v: [UInt8]) {
            let i = lowerBound(k)
            if i < keys.count && relSame(keys[i], k) {
                vals[i] = v
            } else {
                keys.insert(k, at: i)
                vals.insert(v, at: i)
            }
        }

        mutating func delete(_ k: [UInt8]) -> Bool {
            let i = lowerBound(k)
            guard i < keys.count && relSame(keys[i], k) else { return false }
            keys.remove(at: i)
            vals.remove(at: i)
            return true
        }

        /// Indexes of the entries with `lower ≤ key < upper`, in order or reversed.
        func range(_ lower: [UInt8]?, _ upper: [UInt8]?, reverse: Bool) -> [Int] {
            let lo = lower.map(lowerBound) ?? 0
            let hi = upper.map(lowerBound) ?? keys.count
            guard lo < hi else { return [] }
            return reverse ? Array((lo..<hi).reversed()) : Array(lo..<hi)
        }
    }

    typealias Model = [String: ModelTree]

    static func fingerprint(_ model: Model) -> RelPrint {
        var p = RelPrint([:])
        for (name, t) in model {
            var f = RelPrint.Tree()
            for (k, v) in zip(t.keys, t.vals) { k.withUnsafeBytes { kb in v.withUnsafeBytes { f.add(kb, $0) } } }
            p.trees[name] = f
        }
        return p
    }

    /// The key for `id`: mostly short, some medium, a few long (up to the 1024-byte limit).
    static func modelKey(_ id: Int) -> [UInt8] {
        var h = SeededRandom(seed: UInt64(id) &* 0x9E37_79B9)
        let base = Array("k\(String(id).count)\(id)".utf8)
        let length: Int
        switch h.next() % 40 {
        case 0: length = 1024
        case 1...2: length = Int(h.next() % 700) + 300
        case 3...8: length = Int(h.next() % 180) + 17
        default: return base
        }
        var k = base
        while k.count < length { k.append(UInt8(truncatingIfNeeded: h.next() | 1)) }
        return k
    }

    static func modelValue(_ rng: inout SeededRandom) -> [UInt8] {
        let r = Int.random(in: 0..<100, using: &rng)
        let n: Int
        switch r {
        case 0..<55: n = Int.random(in: 0...100, using: &rng)
        case 55..<85: n = Int.random(in: 100...900, using: &rng)
        case 85..<97: n = Int.random(in: 1_000...3_000, using: &rng)   // overflow frames
        default: n = Int.random(in: 5_000...20_000, using: &rng)
        }
        // Partly compressible: a random head, then a repeated byte.
        let head = min(n, Int.random(in: 0...n, using: &rng))
        return relRandomBytes(head, &rng) + [UInt8](repeating: UInt8(truncatingIfNeeded: n), count: n - head)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    struct Snapshot {
        var tx: ReadTransaction
        var model: Model
        var openedAt: Int
    }

    /// Compares a bounded range scan of `tree` (a read or write tree) with the model.
    static func compareRange(_ entries: [(key: [UInt8], value: [UInt8])], _ model: ModelTree?, _ lower: [UInt8]?, _ upper: [UInt8]?,
                             reverse: Bool, _ what: @autoclosure () -> String) throws {
        let expected = model?.range(lower, upper, reverse: reverse) ?? []
        guard entries.count == expected.count else {
            throw Failure(description: "\(what()): range has \(entries.count) entries, model \(expected.count)")
        }
        for (e, i) in zip(entries, expected) where !relSame(e.key, model!.keys[i]) || !relSame(e.value, model!.vals[i]) {
            throw Failure(description: "\(what()): range differs from the model at a key of \(e.key.count) bytes")
        }
    }

    /// Bounds for a short range: a lower key near a random position, an upper bound a few keys on.
    static func bounds(_ t: ModelTree?, _ rng: inout SeededRandom) -> ([UInt8]?, [UInt8]?) {
        let keys = t?.keys ?? []
        func pick(_ near: Int) -> [UInt8] {
            if !keys.isEmpty && Bool.random(using: &rng) { return keys[max(0, min(keys.count - 1, near))] }
            return modelKey(Int.random(in: 0..<3_000, using: &rng))
        }
        let i = keys.isEmpty ? 0 : Int.random(in: 0..<keys.count, using: &rng)
        let lower: [UInt8]? = Int.random(in: 0..<10, using: &rng) == 0 && keys.count < 40 ? nil : pick(i)
        let upper: [UInt8]? = Int.random(in: 0..<8, using: &rng) == 0 && keys.count - i < 40 ? nil : pick(i + Int.random(in: 0...30, using: &rng))
        return (lower, upper)
    }

    /// Spot checks of a read transaction against a model: names, counts, one range, some gets.
    static func spotCheck(_ tx: ReadTransaction, _ model: Model, _ rng: inout SeededRandom, _ what: String) throws {
        guard try tx.treeNames == model.keys.sorted() else {
            throw Failure(description: "\(what): trees \(try tx.treeNames), model \(model.keys.sorted())")
        }
        for name in try tx.treeNames {
            let t = try tx.tree(name)!
            let m = model[name]!
            guard try t.count == m.count else { throw Failure(description: "\(what): '\(name)' has \(try t.count) entries, model \(m.count)") }
            let (lo, hi) = bounds(m, &rng)
            let reverse = Bool.random(using: &rng)
            try compareRange(try t.entries(from: lo, to: hi, reverse: reverse), m, lo, hi, reverse: reverse, "\(what) '\(name)'")
            for _ in 0..<3 {
                let k = m.keys.randomElement(using: &rng) ?? modelKey(1)
                guard relSame(try t.get(k), m.value(k)) else { throw Failure(description: "\(what): get in '\(name)' differs") }
            }
        }
    }

    /// A cursor walk: seek, then random steps both ways, each compared with the model.
    static func cursorWalk(_ t: ReadTree, _ m: ModelTree, _ rng: inout SeededRandom, _ what: String) throws {
        let c = t.makeCursor()
        var index: Int
        var ok: Bool
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: ok = try c.first(); index = 0
        case 1: ok = try c.last(); index = m.count - 1
        case 2:
            let k = m.keys.randomElement(using: &rng) ?? modelKey(5)
            ok = try c.seekBackward(k)
            let lb = m.lowerBound(k)
            index = lb < m.count && m.keys[lb] == k ? lb : lb - 1
        default:
            let k = modelKey(Int.random(in: 0..<3_000, using: &rng))
            ok = try c.seek(k); index = m.lowerBound(k)
        }
        for step in 0..<12 {
            let inside = index >= 0 && index < m.count
            guard ok == inside else { throw Failure(description: "\(what): cursor valid=\(ok), model index \(index) of \(m.count) (step \(step))") }
            if inside {
                guard relSame(c.copyKey(), m.keys[index]), relSame(try c.copyValue(), m.vals[index]) else {
                    throw Failure(description: "\(what): cursor at the wrong entry (step \(step))")
                }
            } else { break }
            if Bool.random(using: &rng) { ok = try c.next(); index += 1 } else { ok = try c.previous(); index -= 1 }
        }
    }

    struct Totals {
        var operations = 0
        var commits = 0
        var rollbacks = 0
        var snapshotChecks = 0
        var reopens = 0
        var checkpoints = 0
        var compactions = 0
        var largestTree = 0
        var deepestTree = 0
        var fileBytes = 0
    }

    static func run(seed: UInt64, operations target: Int, durability: Durability) throws -> Totals {
        var rng = SeededRandom(seed: seed)
        let fs = SimulatedFileSystem()
        var options = relOptions(fs, durability)
        options.cacheBytes = 256 << 10           // small: pages are evicted and re-read from the file
        options.checkpointLogBytes = 192 << 10
        options.checkpointDirtyBytes = 1 << 20
        options.checkpointStepPages = 4  // checkpoints spread over several commits
        var store = try Store(path: relPath, options: options)
        var model: Model = [:]
        var snapshots: [Snapshot] = []
        var totals = Totals()
        var nextFullCheck = 100
        let names = ["a", "b", "c"]
        func ctx() -> String { "seed \(seed) op \(totals.operations)" }

        func verifyAll(_ store: Store) throws {
            let actual = try store.read { try RelPrint($0) }
            guard actual == fingerprint(model) else {
                let content = try relReadAll(store)
                var expected: RelTrees = [:]
                for (n, t) in model { expected[n] = Dictionary(uniqueKeysWithValues: zip(t.keys, t.vals)) }
                throw Failure(description: "\(ctx()): store differs from the model: \(relDiff(expected, content))")
            }
        }

        while totals.operations < target {
            let action = Int.random(in: 0..<1000, using: &rng)
            switch action {
            case 0..<700:
                // A write transaction of a few operations, then commit or roll back.
                var working = model
                let count = Int.random(in: 1...12, using: &rng)
                let ending = Int.random(in: 0..<100, using: &rng)
                do {
                    try store.write { tx in
                        for _ in 0..<count {
                            totals.operations += 1
                            let name = names.randomElement(using: &rng)!
                            let op = Int.random(in: 0..<100, using: &rng)
                            if working[name] == nil {
                                if op < 30 { continue }
                                _ = try tx.tree(name, createIfMissing: true)
                                working[name] = ModelTree()
                            }
                            let t = try tx.tree(name)!
                            switch op {
                            case 0..<55:
                                let k = modelKey(Int.random(in: 0..<2_500, using: &rng))
                                let v = modelValue(&rng)
                                try t.put(k, v)
                                working[name]!.put(k, v)
                            case 55..<75:
                                let k = Int.random(in: 0..<10, using: &rng) < 7
                                    ? (working[name]!.keys.randomElement(using: &rng) ?? modelKey(0)) : modelKey(Int.random(in: 0..<2_500, using: &rng))
                                let existed = try t.delete(k)
                                guard existed == working[name]!.delete(k) else { throw Failure(description: "\(ctx()): delete returned \(existed)") }
                            case 75..<83:
                                let k = working[name]!.keys.randomElement(using: &rng) ?? modelKey(0)
                                guard relSame(try t.get(k), working[name]!.value(k)) else { throw Failure(description: "\(ctx()): get in the transaction differs") }
                            case 83..<93:
                                let (lo, hi) = bounds(working[name], &rng)
                                let reverse = Bool.random(using: &rng)
                                try compareRange(try t.entries(from: lo, to: hi, reverse: reverse), working[name], lo, hi, reverse: reverse, "\(ctx()) in-transaction range")
                            case 93..<100 where op < 99 || Int.random(in: 0..<60, using: &rng) != 0:
                                guard try t.count == working[name]!.count else { throw Failure(description: "\(ctx()): count \(try t.count), model \(working[name]!.count)") }
                            default:
                                try tx.dropTree(name)
                                working[name] = nil
                                guard try tx.tree(name) == nil else { throw Failure(description: "\(ctx()): dropped tree still there") }
                            }
                        }
                        if ending < 8 { throw RelRollback() }
                        if ending < 15 { try tx.rollback() }
                    }
                    if ending < 15 { totals.rollbacks += 1 } else { model = working; totals.commits += 1 }
                } catch is RelRollback {
                    totals.rollbacks += 1
                }
            case 700..<780:
                totals.operations += 1
                try store.read { tx in try spotCheck(tx, model, &rng, "\(ctx()) latest") }
            case 780..<830:
                totals.operations += 1
                try store.read { tx in
                    for name in try tx.treeNames { try cursorWalk(try tx.tree(name)!, model[name]!, &rng, "\(ctx()) cursor in '\(name)'") }
                }
            case 830..<870:
                totals.operations += 1
                if snapshots.count < 6 { snapshots.append(Snapshot(tx: try store.snapshot(), model: model, openedAt: totals.operations)) }
            case 870..<905:
                totals.operations += 1
                if !snapshots.isEmpty {
                    // Before it goes: one full comparison.
                    let s = snapshots.remove(at: Int.random(in: 0..<snapshots.count, using: &rng))
                    guard try RelPrint(s.tx) == fingerprint(s.model) else {
                        throw Failure(description: "\(ctx()): snapshot opened at op \(s.openedAt) no longer matches its commit")
                    }
                    s.tx.close()
                }
            case 905..<950:
                totals.operations += 1
                if let s = snapshots.randomElement(using: &rng) {
                    try spotCheck(s.tx, s.model, &rng, "\(ctx()) snapshot from op \(s.openedAt)")
                    for name in try s.tx.treeNames { try cursorWalk(try s.tx.tree(name)!, s.model[name]!, &rng, "\(ctx()) snapshot cursor") }
                }
            case 950..<970:
                totals.operations += 1
                totals.checkpoints += 1
                try store.checkpoint()
            case 970..<976:
                totals.operations += 1
                totals.compactions += 1
                try store.compact()
                try verifyAll(store)
            case 976..<982:
                // Reopen: close (snapshots stay open and keep working), open a new handle.
                totals.operations += 1
                totals.reopens += 1
                try store.close()
                store = try Store(path: relPath, options: options)
                try verifyAll(store)
                let report = try store.check()
                guard report.isClean || relUnexpectedProblems(report).isEmpty else {
                    throw Failure(description: "\(ctx()): check after reopen: \(report.problems)")
                }
            default:
                totals.operations += 1
                try store.read { tx in
                    let name = names.randomElement(using: &rng)!
                    guard let t = try tx.tree(name) else { return }
                    for _ in 0..<5 {
                        let k = modelKey(Int.random(in: 0..<2_500, using: &rng))
                        guard relSame(try t.get(k), model[name]?.value(k)), try t.contains(k) == (model[name]?.value(k) != nil) else {
                            throw Failure(description: "\(ctx()): get of a random key differs")
                        }
                    }
                }
            }
            if totals.operations >= nextFullCheck {
                // Every ~100 operations: every open snapshot against the model of its commit.
                nextFullCheck += 100
                for s in snapshots {
                    try spotCheck(s.tx, s.model, &rng, "\(ctx()) snapshot from op \(s.openedAt)")
                    totals.snapshotChecks += 1
                }
            }
        }
        totals.largestTree = model.values.map(\.count).max() ?? 0
        totals.deepestTree = store.currentVersion.trees.values.compactMap { $0.root.map { $0.level + 1 } }.max() ?? 0
        totals.fileBytes = fs.contents(of: relPath)?.count ?? 0
        for s in snapshots {
            guard try RelPrint(s.tx) == fingerprint(s.model) else { throw Failure(description: "seed \(seed): snapshot from op \(s.openedAt) differs at the end") }
            s.tx.close()
        }
        try verifyAll(store)
        let report = try store.check()
        guard relUnexpectedProblems(report).isEmpty else { throw Failure(description: "seed \(seed): final check: \(report.problems)") }
        try store.close()
        let reopened = try Store(path: relPath, options: options)
        try verifyAll(reopened)
        try reopened.close()
        return totals
    }

    /// Odd seeds run with full durability, even ones with normal. 115 and 133 left an empty
    /// leaf under a branch with one child (found by widening the sweep to 101…200;
    /// `TreeShapeTests` closes the class). `STRATA_SEED=N` reruns one seed.
    static let seeds: [(UInt64, Durability)] = (ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init).map { [$0] }
        ?? [101, 102, 103, 104, 115, 133]).map { ($0, $0 % 2 == 1 ? .full : .normal) }
    static let operationsPerSeed = 25_000

    @Test(arguments: 0..<RandomOperationsTests.seeds.count)
    func randomOperations(_ index: Int) throws {
        let (seed, durability) = RandomOperationsTests.seeds[index]
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let t = try RandomOperationsTests.run(seed: seed, operations: RandomOperationsTests.operationsPerSeed, durability: durability)
            print("RandomOperationsTests seed \(seed) \(durability): \(t.operations) operations, \(t.commits) commits, \(t.rollbacks) rollbacks, \(t.snapshotChecks) snapshot checks, \(t.checkpoints) checkpoints, \(t.compactions) compactions, \(t.reopens) reopens; largest tree \(t.largestTree) entries, \(t.deepestTree) levels, file \(t.fileBytes) bytes; in \(clock.now - start)")
        } catch {
            Issue.record("seed \(seed) (\(durability)): \(error)")
        }
    }
}
