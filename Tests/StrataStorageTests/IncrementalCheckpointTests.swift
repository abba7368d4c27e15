import Testing
@testable import StrataStorage

/// Automatic checkpoints spread over commits (decision 37): once one is due, each commit
/// writes a bounded share of the dirty pages and the last share writes the checkpoint, so no
/// commit stalls behind a whole checkpoint; the dirty trigger counts a page once however many
/// commits change it. Crashes in the middle of such a checkpoint are `CrashTests`' (its
/// options take three pages per step).
@Suite struct IncrementalCheckpointTests {
    /// Small random commits into a large tree: the checkpoint they make due takes many
    /// commits, none of which grows the log by much more than its own share; after each
    /// checkpoint the store checks clean (space accounting included), and a reopen finds
    /// every commit.
    @Test(arguments: [Durability.full, .normal])
    func aDueCheckpointIsSpreadOverTheCommitsThatFollow(durability: Durability) throws {
        let seed: UInt64 = 20261123
        let fs = SimulatedFileSystem()
        var o = relOptions(fs, durability)
        o.checkpointLogBytes = 1 << 30
        o.checkpointDirtyBytes = 200 * o.pageSize
        o.checkpointStepPages = 8
        let store = try Store(path: relPath, options: o)
        var rng = SeededRandom(seed: seed)
        var model: [[UInt8]: [UInt8]] = [:]
        try store.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<30_000 {
                let v = randomBytes(60, &rng)
                try t.put(key(i), v)
                model[key(i)] = v
            }
        }
        try store.checkpoint()
        var checkpoints = store.statistics.checkpoints
        var commitsSinceCheckpoint = 0
        var longestCheckpoint = 0
        var largestGrowth: UInt64 = 0
        var completed = 0
        for _ in 0..<1_500 {
            let before = try store.info().logBytes
            try store.write { tx in
                let t = try tx.tree("t")!
                // Two puts far apart: each dirties its own leaf (and the branches above).
                for _ in 0..<2 {
                    let k = key(Int(rng.next() % 30_000)), v = randomBytes(60, &rng)
                    try t.put(k, v)
                    model[k] = v
                }
            }
            largestGrowth = max(largestGrowth, try store.info().logBytes - before)
            commitsSinceCheckpoint += 1
            if store.statistics.checkpoints != checkpoints {
                checkpoints = store.statistics.checkpoints
                longestCheckpoint = max(longestCheckpoint, commitsSinceCheckpoint)
                commitsSinceCheckpoint = 0
                completed += 1
                let report = try store.check()
                #expect(report.isClean, "seed \(seed): after checkpoint \(completed): \(report.problems)")
            }
        }
        #expect(completed >= 3, "seed \(seed): \(completed) checkpoints")
        // Each commit dirties at most ~8 pages (two leaves and their branches), so its share
        // is at most 16 pages, plus its own commit frame and, once, the checkpoint frame; the
        // whole checkpoint is 200 pages of random (incompressible) values.
        let bound = UInt64(24 * o.pageSize)
        #expect(largestGrowth <= bound, "seed \(seed): a commit grew the log by \(largestGrowth) bytes (bound \(bound))")
        try store.close()
        let reopened = try Store(path: relPath, options: relOptions(fs, durability))
        #expect(try relReadAll(reopened)["t"] == model, "seed \(seed): reopened content")
        let report = try reopened.check()
        #expect(report.isClean, "seed \(seed): \(report.problems)")
        try reopened.close()
    }

    /// A commit that changes pages an earlier commit already made dirty adds nothing to the
    /// dirty trigger: a thousand updates of one key never start a checkpoint.
    @Test func pagesAreCountedDirtyOnce() throws {
        let fs = SimulatedFileSystem()
        var o = relOptions(fs, .normal)
        o.checkpointLogBytes = 1 << 30
        o.checkpointDirtyBytes = 64 * o.pageSize
        let store = try Store(path: relPath, options: o)
        try store.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<2_000 { try t.put(key(i), bytes("value \(i)")) }
        }
        try store.checkpoint()
        let checkpoints = store.statistics.checkpoints
        for round in 0..<1_000 {
            try store.write { try $0.tree("t")!.put(key(7), bytes("round \(round)")) }
        }
        #expect(store.statistics.checkpoints == checkpoints)
        try store.close()
    }

    /// Dirty pages share the cache's budget (decision 37): random fills with a 2 MiB budget
    /// never hold more than the budget in dirty pages, and the cache shrinks by what they hold.
    @Test func dirtyPagesShareTheCacheBudget() throws {
        let seed: UInt64 = 4
        let fs = SimulatedFileSystem()
        var o = relOptions(fs, .normal)
        o.cacheBytes = 2 << 20
        o.checkpointLogBytes = 1 << 30
        let store = try Store(path: relPath, options: o)
        var rng = SeededRandom(seed: seed)
        try store.write { tx in _ = try tx.createTree("t") }
        var mostDirty = 0, checkpoints = 0
        // The cache's floor (4 pages a shard) and one page a shard of rounding.
        let slack = 16 * 5 * o.pageSize
        for round in 0..<300 {
            try store.write { tx in
                let t = try tx.tree("t")!
                for _ in 0..<50 { try t.put(randomBytes(12, &rng), randomBytes(90, &rng)) }
            }
            let dirty = Int(store.dirtyBytesSinceCheckpoint)
            mostDirty = max(mostDirty, dirty)
            let resident = store.statistics.cacheBytes
            #expect(dirty <= o.cacheBytes, "seed \(seed), round \(round): \(dirty) dirty bytes")
            #expect(resident <= max(o.cacheBytes - dirty, 0) + slack,
                    "seed \(seed), round \(round): \(resident) cached with \(dirty) dirty (budget \(o.cacheBytes))")
            checkpoints = store.statistics.checkpoints
        }
        #expect(checkpoints >= 2 && mostDirty >= o.cacheBytes / 2, "seed \(seed): \(checkpoints) checkpoints, at most \(mostDirty) dirty")
        try store.close()
    }

    /// The copies an open write transaction makes share the cache's budget too (decision 39: a
    /// large transaction's copies took the process past the budget before its commit): the
    /// cache gives up what they hold as they are made, and takes it back when the transaction
    /// rolls back.
    @Test func copiesOfAnOpenTransactionShareTheCacheBudget() throws {
        let seed: UInt64 = 5
        let fs = SimulatedFileSystem()
        var o = relOptions(fs, .normal)
        o.cacheBytes = 4 << 20
        let store = try Store(path: relPath, options: o)
        var rng = SeededRandom(seed: seed)
        let keys = 60_000
        try store.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<keys { try t.put(key(i), randomBytes(100, &rng)) }
        }
        try store.checkpoint()
        // Thrice: a page seen once stays in the cache's probation queue (a quarter of it).
        let workingSet = 26_000  // ~3 MB of leaves: it fits the cache
        func readAll() throws {
            for _ in 0..<3 {
                try store.read { tx in
                    let t = try #require(try tx.tree("t"))
                    for i in 0..<workingSet { _ = try t.get(key(i)) }
                }
            }
        }
        try readAll()
        let slack = 16 * 5 * o.pageSize
        let full = store.statistics.cacheBytes
        #expect(full >= 11 << 18, "seed \(seed): the working set is cached: \(full) bytes")

        struct Rollback: Error {}
        var copied = 0
        #expect(throws: Rollback.self) {
            try store.write { tx in
                let t = try #require(try tx.tree("t"))
                for i in 0..<workingSet { try t.put(key(i), randomBytes(100, &rng)) }
                copied = try #require(tx.trees["t"]).pagesTouched * o.pageSize
                let resident = store.statistics.cacheBytes
                #expect(copied >= 11 << 18, "seed \(seed): \(copied) bytes copied")
                // Held back a step (256 pages) at a time.
                #expect(resident + copied <= o.cacheBytes + slack + 256 * o.pageSize,
                        "seed \(seed): \(resident) cached while the transaction holds \(copied) in copies (budget \(o.cacheBytes))")
                throw Rollback()
            }
        }
        try readAll()
        let after = store.statistics.cacheBytes
        #expect(after >= full - slack, "seed \(seed): the rollback gave the budget back: \(after) cached, \(full) before")
        try store.close()
    }
}
