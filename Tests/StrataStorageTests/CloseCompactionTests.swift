import Testing
@testable import StrataStorage

/// What close writes (a cheaper close; decision 39): when the log since the last checkpoint
/// would make the file due for compaction, close compacts straight from the trees in memory
/// instead of checkpointing first (which wrote every dirty page twice); otherwise it
/// checkpoints and compacts only if the file is then due, as before.
@Suite struct CloseCompactionTests {
    static func options(_ fs: SimulatedFileSystem) -> StoreOptions {
        var o = relOptions(fs, .normal)
        o.compactOnCloseGarbageRatio = 0.4
        o.checkpointLogBytes = 1 << 40  // no automatic checkpoint: the whole load stays in the log
        o.checkpointDirtyBytes = 1 << 40
        return o
    }

    /// A bulk load in many commits, closed with everything in the log: close compacts without
    /// a checkpoint, and the file it leaves holds the data once (no commit frames), reopens
    /// with every entry and checks clean.
    @Test func closeAfterABulkLoadCompactsWithoutCheckpointingFirst() throws {
        let seed: UInt64 = 20261124
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: Self.options(fs))
        var rng = SeededRandom(seed: seed)
        // Incompressible: the log passes 4 MiB.
        let model = try Self.load(store) { randomBytes(100, &rng) }
        let logBytes = try store.info().logBytes
        #expect(logBytes > 6 << 20, "seed \(seed): the load is mostly log: \(logBytes) bytes")
        try Self.expectCloseCompactsWithoutCheckpoint(store, fs, model, seed: seed)
    }

    /// A fresh store loaded with compressible values: its whole content is a log under 4 MiB,
    /// and none of its pages has been written. Close compacts (writing each page once, as a
    /// checkpoint would, and leaving no log behind) instead of checkpointing, finding the file
    /// now past 4 MiB and mostly log, and compacting: every page written twice.
    @Test func closeOfAFreshStoreWithAShortLogCompactsWithoutCheckpointingFirst() throws {
        let seed: UInt64 = 20261127
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: Self.options(fs))
        var rng = SeededRandom(seed: seed)
        // 8 random bytes then a run: the log compresses it, and so do the pages.
        let model = try Self.load(store) { randomBytes(8, &rng) + [UInt8](repeating: 0x61, count: 92) }
        let info = try store.info()
        #expect(info.logBytes < 4 << 20, "seed \(seed): the log is past the floor on its own: \(info.logBytes) bytes")
        #expect(store.statistics.checkpoints == 0, "seed \(seed): nothing written but the log")
        #expect(info.logBytes + store.dirtyBytesSinceCheckpoint > 4 << 20, "seed \(seed): with its dirty pages, the store is past the floor")
        try Self.expectCloseCompactsWithoutCheckpoint(store, fs, model, seed: seed)
    }

    /// Puts 60,000 keys into tree "t" in 60 commits, each value made by `value`; what it put.
    static func load(_ store: Store, value: () -> [UInt8]) throws -> [[UInt8]: [UInt8]] {
        var model: [[UInt8]: [UInt8]] = [:]
        for batch in 0..<60 {
            try store.write { tx in
                let t = try tx.tree("t") ?? tx.createTree("t")
                for i in 0..<1_000 {
                    let v = value()
                    try t.put(key(batch * 1_000 + i), v)
                    model[key(batch * 1_000 + i)] = v
                }
            }
        }
        return model
    }

    /// Closes `store`, expecting a compaction and no checkpoint, then reopens the file: clean,
    /// nothing dead or to replay, and exactly `model` in tree "t".
    static func expectCloseCompactsWithoutCheckpoint(_ store: Store, _ fs: SimulatedFileSystem,
                                                     _ model: [[UInt8]: [UInt8]], seed: UInt64) throws {
        let before = store.statistics
        try store.close()
        let after = store.statistics
        #expect(after.checkpoints == before.checkpoints, "seed \(seed): close checkpointed before compacting")
        #expect(after.compactions == before.compactions + 1, "seed \(seed): close did not compact")

        let reopened = try Store(path: relPath, options: Self.options(fs))
        defer { try? reopened.close() }
        let report = try reopened.check()
        #expect(report.isClean, "seed \(seed): \(report.problems)")
        let info = try reopened.info()
        #expect(info.deadBytes == 0 && info.checkpointTransactionID == info.transactionID,
                "seed \(seed): \(info.deadBytes) dead of \(info.logBytes), replayed from \(info.checkpointTransactionID)")
        try reopened.read { tx in
            let t = try #require(try tx.tree("t"))
            #expect(try t.count == model.count)
            for (k, v) in model { #expect(try t.get(k) == v, "seed \(seed): \(k)") }
        }
    }

    /// A compacted store of 60,000 keys, then updates of every `step`-th key in commits of 20:
    /// the store and what it holds. Nearly every leaf is copied.
    static func scatteredUpdates(_ fs: SimulatedFileSystem, step: Int, seed: UInt64) throws -> (Store, [[UInt8]: [UInt8]]) {
        let store = try Store(path: relPath, options: Self.options(fs))
        var rng = SeededRandom(seed: seed)
        var model: [[UInt8]: [UInt8]] = [:]
        try store.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<60_000 {
                let v = randomBytes(100, &rng)
                try t.put(key(i), v)
                model[key(i)] = v
            }
        }
        try store.compact()  // no garbage, nothing dirty
        let keys = Array(stride(from: 0, to: 60_000, by: step))
        for start in stride(from: 0, to: keys.count, by: 20) {
            try store.write { tx in
                let t = try #require(try tx.tree("t"))
                for i in keys[start..<min(keys.count, start + 20)] {
                    let v = randomBytes(100, &rng)
                    try t.put(key(i), v)
                    model[key(i)] = v
                }
            }
        }
        return (store, model)
    }

    /// Updates to half the keys of a checkpointed store: the log since the checkpoint is short,
    /// but the checkpoint would rewrite nearly every page whole (each changed in more cells than
    /// a leaf delta holds) and leave the old ones as garbage, so the file would be due right
    /// after it. Close compacts at once instead of checkpointing first (the pages the
    /// checkpoint would replace count as garbage-to-be).
    @Test func closeAfterDenseUpdatesCompactsWithoutCheckpointingFirst() throws {
        let seed: UInt64 = 20261126
        let fs = SimulatedFileSystem()
        let (store, model) = try Self.scatteredUpdates(fs, step: 2, seed: seed)
        let info = try store.info()
        #expect(info.deadBytes * 10 < info.logBytes, "seed \(seed): little garbage before the checkpoint: \(info.deadBytes) of \(info.logBytes)")
        try Self.expectCloseCompactsWithoutCheckpoint(store, fs, model, seed: seed)
    }

    /// Small updates spread over a checkpointed store (one key in 25): the checkpoint writes each
    /// changed leaf as a leaf delta, whose base stays live, so the file is not due after it and
    /// close checkpoints without compacting. The deltas are all it adds to the file.
    @Test func closeAfterScatteredUpdatesWritesDeltasAndDoesNotCompact() throws {
        let seed: UInt64 = 20261126
        let fs = SimulatedFileSystem()
        let (store, model) = try Self.scatteredUpdates(fs, step: 25, seed: seed)
        let before = store.statistics
        let sizeBefore = try store.info().logBytes
        try store.close()
        let after = store.statistics
        #expect(after.checkpoints == before.checkpoints + 1, "seed \(seed): close did not checkpoint")
        #expect(after.compactions == before.compactions, "seed \(seed): close compacted")

        let reopened = try Store(path: relPath, options: Self.options(fs))
        defer { try? reopened.close() }
        let report = try reopened.check()
        #expect(report.isClean, "seed \(seed): \(report.problems)")
        let info = try reopened.info()
        #expect(info.checkpointTransactionID == info.transactionID, "seed \(seed): replayed from \(info.checkpointTransactionID)")
        #expect(info.logBytes < sizeBefore + sizeBefore / 4, "seed \(seed): the file grew from \(sizeBefore) to \(info.logBytes)")
        try reopened.read { tx in
            let t = try #require(try tx.tree("t"))
            #expect(try t.count == model.count)
            for (k, v) in model { #expect(try t.get(k) == v, "seed \(seed): \(k)") }
        }
    }

    /// A large store with a short log since its checkpoint: close checkpoints and does not
    /// compact (rewriting all the data to drop a little log would cost more than it saves).
    @Test func closeWithAShortLogCheckpointsAndKeepsTheFile() throws {
        let seed: UInt64 = 20261125
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: Self.options(fs))
        var rng = SeededRandom(seed: seed)
        try store.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<60_000 { try t.put(key(i), randomBytes(100, &rng)) }
        }
        try store.compact()  // no garbage: the load's log is gone
        try store.write { tx in try tx.tree("t")!.put(key(7), randomBytes(100, &rng)) }
        let before = store.statistics
        try store.close()
        let after = store.statistics
        #expect(after.checkpoints == before.checkpoints + 1, "seed \(seed)")
        #expect(after.compactions == before.compactions, "seed \(seed): close compacted a file with little garbage")
        let reopened = try Store(path: relPath, options: Self.options(fs))
        defer { try? reopened.close() }
        #expect(try reopened.check().isClean)
    }

    /// On the real file system: a compaction on close of a load past the 8 MiB writeback
    /// stride (the copy is handed to the device as it is written, then synced once) leaves a
    /// file that reopens whole; and the hint takes any range without failing or trapping.
    @Test func closeCompactionOnDiskHandsTheCopyToTheDeviceAsItGoes() throws {
        let seed: UInt64 = 20261126
        let dir = TempDir()
        defer { dir.cleanup() }
        var o = StoreOptions(durability: .normal)
        o.checkpointLogBytes = 1 << 40
        o.checkpointDirtyBytes = 1 << 40
        let path = dir.file("load.strata")
        let store = try Store(path: path, options: o)
        var rng = SeededRandom(seed: seed)
        for batch in 0..<100 {
            try store.write { tx in
                let t = try tx.tree("t") ?? tx.createTree("t")
                for i in 0..<1_000 { try t.put(key(batch * 1_000 + i), randomBytes(100, &rng)) }
            }
        }
        let compactions = store.statistics.compactions
        try store.close()
        #expect(store.statistics.compactions == compactions + 1, "seed \(seed)")
        let reopened = try Store(path: path, options: o)
        defer { try? reopened.close() }
        let info = try reopened.info()
        #expect(info.logBytes > 8 << 20 && info.deadBytes == 0, "seed \(seed): \(info.logBytes) bytes, \(info.deadBytes) dead")
        #expect(try reopened.check().isClean, "seed \(seed)")
        let count = try reopened.read { tx in try tx.tree("t")?.count }
        #expect(count == 100_000, "seed \(seed)")

        let file = try PosixFileSystem().open(dir.file("hint"), mode: .create)
        defer { file.close() }
        for (offset, length) in [(UInt64(0), UInt64(0)), (0, 1 << 20), (.max, .max), (1 << 62, 1 << 62), (7, .max)] {
            file.startWriteback(at: offset, length: length)
        }
        try file.sync()
    }
}
