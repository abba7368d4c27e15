import Foundation
import Testing
@testable import StrataStorage

/// The shape of a tree under deletes: no page but the root is ever empty, branch cell 0 has no
/// key, levels fall by one, keys stay inside their parents' bounds. Keys up to the 1,024-byte
/// limit leave three or four cells to a branch page, so neighbours too full to merge (and a
/// branch left with one child) happen within a few hundred keys — the states behind "empty page
/// at level 0" in `RandomOperationsTests` seeds 115 and 133. Every commit is walked.
@Suite struct TreeShapeTests {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Keys mostly long (the limit itself is common), some short; a distinct prefix per id.
    static func shapeKey(_ id: Int, _ rng: inout SeededRandom) -> [UInt8] {
        let length: Int
        switch Int.random(in: 0..<10, using: &rng) {
        case 0..<3: length = 1_024
        case 3..<7: length = Int.random(in: 400...1_023, using: &rng)
        default: length = Int.random(in: 8...60, using: &rng)
        }
        var k = Array("\(id):".utf8)
        while k.count < length { k.append(UInt8.random(in: 32...126, using: &rng)) }
        return k
    }

    /// What is wrong with the shape of every tree of the newest commit (empty when sound).
    static func shapeProblems(_ store: Store) throws -> [String] {
        let version = store.currentVersion
        var problems: [String] = []
        for (name, tree) in version.trees {
            guard let root = tree.root else { continue }
            var entries: UInt64 = 0
            func visit(_ page: Page, lower: [UInt8]?, upper: [UInt8]?) throws {
                if page.count == 0 && page !== root { problems.append("'\(name)': empty page at level \(page.level)") }
                if !page.isLeaf && page.count > 0 && page.key(0).count != 0 { problems.append("'\(name)': branch cell 0 has a key") }
                for i in 0..<page.count where page.isLeaf || i > 0 {
                    let key = [UInt8](page.key(i))
                    if let lower, compareBytes(key, lower) < 0 { problems.append("'\(name)': key below its bound") }
                    if let upper, compareBytes(key, upper) >= 0 { problems.append("'\(name)': key at or above its bound") }
                }
                if page.isLeaf {
                    entries += UInt64(page.count)
                    return
                }
                for i in 0..<page.count {
                    let child = try TreeRead.child(page, i, version.file)
                    if child.level != page.level - 1 { problems.append("'\(name)': level \(child.level) under \(page.level)") }
                    try visit(child, lower: i == 0 ? lower : [UInt8](page.key(i)),
                              upper: i + 1 < page.count ? [UInt8](page.key(i + 1)) : upper)
                }
            }
            try visit(root, lower: nil, upper: nil)
            if entries != tree.count { problems.append("'\(name)': \(entries) entries, count \(tree.count)") }
        }
        return problems
    }

    /// Grows a tree to a few hundred long keys, then deletes (with some puts) until it is empty,
    /// a few operations per commit; the shape is walked after every commit and the content
    /// compared with the model after every tenth. Returns the commits and the deepest tree.
    static func run(seed: UInt64) throws -> (commits: Int, depth: Int) {
        var rng = SeededRandom(seed: seed)
        let fs = SimulatedFileSystem()
        var options = relOptions(fs, .normal)
        options.cacheBytes = 128 << 10  // small: children are read back from the file
        let store = try Store(path: relPath, options: options)
        defer { try? store.close() }
        var model: [[UInt8]: [UInt8]] = [:]
        var nextID = 0
        var commits = 0
        var depth = 0
        let target = Int.random(in: 120...400, using: &rng)
        var growing = true
        while growing || !model.isEmpty {
            if growing && model.count >= target { growing = false }
            var working = model
            try store.write { tx in
                let tree = try tx.treeCreatingIfMissing("t")
                for _ in 0..<Int.random(in: 1...8, using: &rng) {
                    let putting = growing ? Int.random(in: 0..<10, using: &rng) < 8 : Int.random(in: 0..<10, using: &rng) < 2
                    if putting {
                        let k = shapeKey(nextID, &rng)
                        nextID += 1
                        let v = [UInt8](repeating: UInt8(truncatingIfNeeded: nextID), count: Int.random(in: 0...300, using: &rng))
                        try tree.put(k, v)
                        working[k] = v
                    } else if let k = working.keys.randomElement(using: &rng) {
                        guard try tree.delete(k) else { throw Failure(description: "seed \(seed): a present key was not deleted") }
                        working[k] = nil
                    }
                }
            }
            model = working
            commits += 1
            depth = max(depth, store.currentVersion.trees["t"]?.root.map { $0.level + 1 } ?? 0)
            let problems = try shapeProblems(store)
            guard problems.isEmpty else { throw Failure(description: "seed \(seed) commit \(commits): \(problems.prefix(3))") }
            if commits % 10 == 0 || model.isEmpty {
                let content = try store.read { tx in try tx.tree("t").map { try $0.entries(from: nil, to: nil) } ?? [] }
                guard content.count == model.count, content.allSatisfy({ model[$0.key] == $0.value }) else {
                    throw Failure(description: "seed \(seed) commit \(commits): the tree differs from the model")
                }
            }
        }
        guard store.currentVersion.trees["t"]?.root == nil else { throw Failure(description: "seed \(seed): an emptied tree kept a root") }
        let report = try store.check()
        guard relUnexpectedProblems(report).isEmpty else { throw Failure(description: "seed \(seed): check: \(report.problems.prefix(3))") }
        return (commits, depth)
    }

    /// `STRATA_SEED=N` reruns one seed.
    static let seeds: [UInt64] = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init).map { [$0] }
        ?? Array(1...120)

    @Test func deletesLeaveNoEmptyPageAndEveryBranchSound() throws {
        var deepest = 0
        var commits = 0
        for seed in TreeShapeTests.seeds {
            do {
                let r = try TreeShapeTests.run(seed: seed)
                deepest = max(deepest, r.depth)
                commits += r.commits
            } catch {
                Issue.record("seed \(seed) (rerun with STRATA_SEED=\(seed)): \(error)")
            }
        }
        print("TreeShapeTests: \(TreeShapeTests.seeds.count) seeds, \(commits) commits walked, deepest tree \(deepest) levels")
        // The keys must make trees deep enough to have branches below the root.
        #expect(deepest >= 3)
    }
}
