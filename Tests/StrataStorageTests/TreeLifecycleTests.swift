import Foundation
import Testing
@testable import StrataStorage
import StrataTesting

/// Every sequence of tree operations on one name inside one transaction — create, put, drop, in
/// any order the tree's state allows, up to five, from a name that is free or holds a committed
/// tree — commits to a store whose space accounting agrees with a walk of its pages: at once,
/// after reopening, and after a crash at each file operation of the close (checkpoint and
/// compaction). A name dropped twice in one transaction (the committed tree, then one created
/// since) once lost the first tree's freed space: found by a migration plan, whose stages drop
/// and re-create every record tree.
@Suite struct TreeLifecycleTests {
    enum Step: CaseIterable, CustomStringConvertible {
        case create, put, drop
        var description: String {
            switch self {
            case .create: return "create"
            case .put: return "put"
            case .drop: return "drop"
            }
        }
    }

    /// Sequences the state allows: create only when absent, put and drop only when present.
    static func sequences(startingPresent: Bool, length: Int) -> [[Step]] {
        guard length > 0 else { return [[]] }
        var out: [[Step]] = [[]]
        func extend(_ prefix: [Step], present: Bool) {
            guard prefix.count < length else { return }
            for step in Step.allCases {
                switch (step, present) {
                case (.create, false), (.put, true), (.drop, true):
                    let next = prefix + [step]
                    out.append(next)
                    extend(next, present: step == .drop ? false : true)
                default: continue
                }
            }
        }
        extend([], present: startingPresent)
        return out
    }

    static func options(_ fs: SimulatedFileSystem) -> StoreOptions {
        var o = StoreOptions(durability: .full)
        o.fileSystem = fs
        o.syncIntervalMilliseconds = 3_600_000
        o.compactOnCloseGarbageRatio = 0.01  // compact at close whenever anything is garbage
        o.checkpointStepPages = 3
        return o
    }

    static let path = "/db/trees.strata"

    /// Puts enough values to need several pages (some of them overflow values).
    static func fill(_ tree: WriteTree, round: Int) throws {
        for i in 0..<40 {
            let value = [UInt8](repeating: UInt8(truncatingIfNeeded: i &+ round), count: i == 7 ? 9_000 : 300)
            try tree.put(Array("k\(round)-\(i)".utf8), value)
        }
    }

    @Test func everyOperationSequenceOnOneNameKeepsTheSpaceAccountingTrue() throws {
        var checked = 0
        for startingPresent in [false, true] {
            for sequence in Self.sequences(startingPresent: startingPresent, length: 5) {
                let label = "\(startingPresent ? "committed" : "free") then \(sequence)"
                let fs = SimulatedFileSystem()
                let store = try Store(path: Self.path, options: Self.options(fs))
                try store.write { tx in
                    try Self.fill(try tx.createTree("bystander"), round: 99)
                    if startingPresent { try Self.fill(try tx.createTree("t"), round: 0) }
                }
                try store.write { tx in
                    for (i, step) in sequence.enumerated() {
                        switch step {
                        case .create: try tx.createTree("t")
                        case .put: try Self.fill(try #require(try tx.tree("t")), round: i + 1)
                        case .drop: try tx.dropTree("t")
                        }
                    }
                }
                let open = try store.check()
                #expect(open.isClean, "\(label), open: \(open.problems)")
                let beforeClose = fs.clone()
                let mutations = fs.mutationCount
                try store.close()
                let closeCalls = fs.mutationCount - mutations
                let reopened = try Store(path: Self.path, options: Self.options(fs))
                let report = try reopened.check()
                #expect(report.isClean, "\(label), reopened: \(report.problems)")
                try reopened.close()
                // A crash at each file operation of the close.
                for n in 0..<closeCalls {
                    let crashed = beforeClose.clone()
                    let image = try Store(path: Self.path, options: Self.options(crashed))
                    crashed.crashAfter(operations: n)
                    try? image.close()
                    crashed.crash(seed: UInt64(n) &+ 1)
                    let recovered = try Store(path: Self.path, options: Self.options(crashed))
                    let after = try recovered.check()
                    #expect(after.isClean, "\(label), crash at close call \(n) of \(closeCalls): \(after.problems)")
                    try recovered.close()
                }
                checked += 1
            }
        }
        print("TreeLifecycleTests: \(checked) sequences")
        #expect(checked > 20)
    }
}
