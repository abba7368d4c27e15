import StrataStorage
import StrataTesting

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
