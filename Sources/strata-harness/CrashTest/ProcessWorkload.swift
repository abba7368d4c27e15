import StrataStorage
import StrataTesting

/// The writer's workload: each step (1, 2, …) is a pure function of the seed and its number, so a
/// writer that restarts after a kill continues where the store says it stopped, and the
/// checker can compute every state. Tree "meta" holds the last step.
enum ProcessWorkload {
    static let metaTree = "meta"
    static let metaKey = Array("step".utf8)

    static func trees(atStep step: Int) -> [String] {
        var names = ["alpha", "beta", metaTree]
        if (5..<25).contains(step % 40) { names.append("gamma") }
        return names.sorted()
    }

    static func ops(seed: UInt64, step: Int) -> [CrashWorkload.Op] {
        var rng = SplitMix64(seed: mixSeed(seed, UInt64(step), 0x5052_4F43))
        var ops: [CrashWorkload.Op] = []
        if step == 1 { ops += [.createTree("alpha"), .createTree("beta"), .createTree(metaTree)] }
        if step % 40 == 5 { ops.append(.createTree("gamma")) }
        if step % 40 == 25 { ops.append(.dropTree("gamma")) }
        let names = trees(atStep: step).filter { $0 != metaTree }
        for _ in 0..<rng.int(1...6) {
            let tree = names[rng.below(names.count)]
            if rng.below(4) == 0 {
                ops.append(.delete(tree: tree, key: CrashWorkload.key(rng.below(150))))
            } else {
                ops.append(.put(tree: tree, key: CrashWorkload.key(rng.below(150)),
                                value: CrashWorkload.value(&rng)))
            }
        }
        ops.append(.put(tree: metaTree, key: metaKey,
                        value: ReferenceFormat.littleEndianBytes(UInt64(step), width: 8)))
        return ops
    }

    /// Applies a step's `ops` to `model` (tree → key → value hash).
    static func apply(_ ops: [CrashWorkload.Op], to model: inout [String: [[UInt8]: UInt64]]) {
        for op in ops {
            switch op {
            case .put(let tree, let key, let value): model[tree]![key] = hashBytes(value)
            case .delete(let tree, let key): model[tree]![key] = nil
            case .createTree(let tree): model[tree] = [:]
            case .dropTree(let tree): model[tree] = nil
            }
        }
    }

    static func options() -> StoreOptions {
        var options = StoreOptions(durability: .full)
        options.checkpointLogBytes = 256 << 10
        options.checkpointDirtyBytes = 1 << 20
        options.cacheBytes = 16 << 20
        return options
    }
}
