import StrataTesting

/// A store's content, digested: per tree, the entry count and the sum of the entries' hashes
/// (order-independent, so a model can be digested without sorting). Empty trees count too.
struct ContentDigest: Hashable, Sendable {
    struct Tree: Hashable, Sendable {
        var count = 0
        var sum: UInt64 = 0
    }
    var trees: [String: Tree] = [:]

    /// A model: tree → key → hash of the value.
    init(model: [String: [[UInt8]: UInt64]]) {
        for (name, entries) in model {
            var treeDigest = Tree()
            for (key, valueHash) in entries {
                treeDigest.count += 1
                treeDigest.sum &+= key.withUnsafeBytes { entryHash(key: $0, valueHash: valueHash) }
            }
            trees[name] = treeDigest
        }
    }

    /// A whole content (a workload's expected state).
    init(content: StoreContent) {
        self.init(model: content.mapValues { $0.mapValues { hashBytes($0) } })
    }

    init() {}

    /// One line per tree, for diagnostics.
    var summary: String {
        trees.keys.sorted().map { "\($0):\(trees[$0]!.count)" }.joined(separator: " ")
    }
}
