import Testing
@testable import StrataStorage

/// A compaction copies the leaves of a tree no write changed as they are stored
/// (``StoredTreeCopy``), rebuilds every other tree, and checks each frame it copies as a read
/// checks it.
@Suite struct StoredTreeCopyTests {
    /// Two trees; a compaction packs both; a write changes one; the next compaction copies the
    /// other's leaves as stored and rebuilds the changed one. The store checks clean and reads
    /// back the same, before and after reopening, and so does a backup.
    @Test(arguments: [1, 2_000, 20_000])
    func aTreeNoWriteChangedIsCopiedAsStored(entries: Int) throws {
        let seed = UInt64(20_261_129 + entries)
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: relOptions(fs))
        var rng = SeededRandom(seed: seed)
        var model: [String: [[UInt8]: [UInt8]]] = ["changed": [:], "untouched": [:]]
        func value() -> [UInt8] {
            // Half random, half repeated: pages that compress, as real rows do.
            randomBytes(20, &rng) + [UInt8](repeating: UInt8(rng.next() % 4), count: 20)
        }
        try store.write { tx in
            for name in ["changed", "untouched"] {
                let t = try tx.createTree(name)
                for i in 0..<entries {
                    let v = value()
                    try t.put(key(i), v)
                    model[name]![key(i)] = v
                }
            }
        }
        try store.compact()
        #expect(store.statistics.pagesCopiedAsStored == 0, "seed \(seed): the first compaction rebuilds the log's trees")
        try store.write { tx in
            let t = try #require(try tx.tree("changed"))
            for _ in 0..<max(1, entries / 10) {
                let k = key(Int(rng.next() % UInt64(entries)))
                let v = value()
                try t.put(k, v)
                model["changed"]![k] = v
            }
        }
        let untouchedLeaves = try leafCount(store, "untouched")
        try store.compact()
        // One entry is a leaf far from three quarters full: rebuilt.
        #expect(store.statistics.pagesCopiedAsStored == (entries == 1 ? 0 : untouchedLeaves), "seed \(seed)")
        #expect(try store.check().isClean, "seed \(seed)")
        try expectTrees(of: store, hold: model, "seed \(seed): after the compaction")
        try expectBackupAndReopen(store, hold: model, fs: fs, "seed \(seed)")
    }

    /// A tree a few writes changed since its last compaction, checkpointed or not: its written
    /// leaves are copied as stored, the changed ones (and those the checkpoint wrote as leaf
    /// deltas, which a copy never holds) from their images, and the store reads back the same
    /// (also after reopening, and in a backup).
    @Test(arguments: [false, true])
    func aChangedTreeIsCopiedPageByPage(checkpointFirst: Bool) throws {
        let seed: UInt64 = checkpointFirst ? 20_261_133 : 20_261_132
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: relOptions(fs))
        var rng = SeededRandom(seed: seed)
        var model: [String: [[UInt8]: [UInt8]]] = ["t": [:]]
        func value() -> [UInt8] { randomBytes(20, &rng) + [UInt8](repeating: UInt8(rng.next() % 4), count: 20) }
        try store.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<20_000 {
                let v = value()
                try t.put(key(i), v)
                model["t"]![key(i)] = v
            }
        }
        try store.compact()
        try store.write { tx in
            let t = try #require(try tx.tree("t"))
            for _ in 0..<40 {
                let k = key(Int(rng.next() % 20_000))
                let v = value()
                try t.put(k, v)
                model["t"]![k] = v
            }
        }
        if checkpointFirst { try store.checkpoint() }
        let (leaves, changed, deltas) = try leafCounts(store, "t")
        #expect(checkpointFirst ? changed == 0 && deltas > 0 : changed > 0 && changed < leaves && deltas == 0,
                "seed \(seed)")
        try store.compact()
        #expect(store.statistics.pagesCopiedAsStored == leaves - changed - deltas, "seed \(seed)")
        #expect(try store.check().isClean, "seed \(seed)")
        try expectTrees(of: store, hold: model, "seed \(seed): after the compaction")
        try expectBackupAndReopen(store, hold: model, fs: fs, "seed \(seed)")
    }

    /// A clean tree whose leaves deletions left sparse is rebuilt (packed), not copied.
    @Test func aSparseTreeIsRebuilt() throws {
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: relOptions(fs))
        try store.write { tx in
            let t = try tx.createTree("sparse")
            for i in 0..<20_000 { try t.put(key(i), [UInt8](repeating: UInt8(i % 251), count: 40)) }
        }
        try store.compact()
        try store.write { tx in
            let t = try #require(try tx.tree("sparse"))
            for i in 0..<20_000 where i % 3 != 0 { _ = try t.delete(key(i)) }
        }
        try store.checkpoint()
        let sparseLeaves = try leafCount(store, "sparse")
        try store.compact()
        #expect(store.statistics.pagesCopiedAsStored == 0)
        // Packed: a copy as stored would have kept every sparse leaf.
        #expect(try leafCount(store, "sparse") * 2 < sparseLeaves)
        #expect(try store.check().isClean)
        try store.read { tx in
            let t = try #require(try tx.tree("sparse"))
            #expect(try t.count == 6_667)
        }
        try store.close()
    }

    /// A tree with overflow values is rebuilt (its leaves refer to them by offset).
    @Test func aTreeWithOverflowValuesIsRebuilt() throws {
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: relOptions(fs))
        var rng = SeededRandom(seed: 5)
        let big = randomBytes(20_000, &rng)
        try store.write { tx in
            let t = try tx.createTree("blobs")
            for i in 0..<2_000 { try t.put(key(i), i == 700 ? big : [UInt8](repeating: 7, count: 60)) }
        }
        try store.compact()
        try store.compact()
        #expect(store.statistics.pagesCopiedAsStored == 0)
        try store.read { tx in
            let t = try #require(try tx.tree("blobs"))
            #expect(try t.get(key(700)) == big)
        }
        #expect(try store.check().isClean)
        try store.close()
    }

    /// A leaf damaged on disk after it was cached: the copy checks the frame it copies, so the
    /// compaction fails with `corrupt` naming the frame, and the store keeps its file.
    @Test func aDamagedLeafFailsTheCompactionWithATypedError() throws {
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: relOptions(fs))
        try store.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<5_000 { try t.put(key(i), [UInt8](repeating: UInt8(i % 13), count: 40)) }
        }
        try store.compact()
        // Every leaf into the cache, then one leaf's stored payload damaged under it.
        try store.read { tx in
            let c = try #require(try tx.tree("t")).makeCursor()
            var ok = try c.first()
            while ok { ok = try c.next() }
        }
        let version = store.currentVersion
        let root = try #require(version.trees["t"]?.root)
        try #require(!root.isLeaf)
        let leaf = root.childAddress(root.count / 2)
        try version.file.file.write([0xFF, 0x00, 0xFF], at: leaf + UInt64(Format.frameHeaderLength) + 4)
        #expect {
            try store.compact()
        } throws: { error in
            guard case StrataError.corrupt(_, let offset)? = error as? StrataError else { return false }
            return offset == leaf
        }
        try store.read { tx in
            let t = try #require(try tx.tree("t"))
            #expect(try t.get(key(4_999)) == [UInt8](repeating: UInt8(4_999 % 13), count: 40))
        }
        try store.close()
    }

    /// A backup runs beside the writer, so a checkpoint can give a changed leaf of the backup's
    /// snapshot its offset in the middle of the copy: here at the store's end, which the copy's
    /// window read (preallocated zeros) before the frame was written there. The backup writes
    /// such a leaf from its image and copies the snapshot whole; a copy that trusted the offset,
    /// as a compaction may (it holds the writer gate), reads the stale window.
    @Test func aCheckpointDuringABackupDoesNotMakeItCopyAFrameNotYetWritten() throws {
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: relOptions(fs))
        var model: [[UInt8]: [UInt8]] = [:]
        func put(_ keys: Range<Int>, _ fill: UInt8) throws {
            try store.write { tx in
                let t = try tx.tree("t") ?? tx.createTree("t")
                for i in keys {
                    let v = [UInt8](repeating: fill, count: 20) + [UInt8](repeating: UInt8(i % 251), count: 20)
                    try t.put(key(i), v)
                    model[key(i)] = v
                }
            }
        }
        try put(0..<20_000, 1)
        try store.compact()
        // The last leaves rewritten and written by a checkpoint: the file's last page frames, so
        // the survey's last window starts near the log's end and reaches past it.
        try put(19_800..<20_000, 2)
        try store.checkpoint()
        // The first leaf changed and not written: in memory in the snapshot. Half its cells
        // change, more than a leaf delta holds, so the checkpoint below writes it whole.
        try put(0..<40, 3)
        let snapshot = try store.snapshot()
        defer { snapshot.close() }
        let version = snapshot.version
        let root = try #require(version.trees["t"]?.root)
        var firstLeaf = root
        while !firstLeaf.isLeaf { firstLeaf = try TreeRead.nextChild(firstLeaf, 0, version.file) }
        #expect(firstLeaf.diskAddress == 0)

        func copier(_ path: String, holdsWriterGate: Bool) throws -> (StoredTreeCopy, any StorageFile) {
            let file = try fs.open(path, mode: .create)
            let log = LogWriter(file: file, path: path, end: Format.logStart, allocatedEnd: 0,
                                sync: SyncCoordinator(durableEnd: Format.logStart))
            return (StoredTreeCopy(file: version.file, log: log, txid: version.txid, holdsWriterGate: holdsWriterGate), file)
        }
        let (backup, backupFile) = try copier("/db/backup", holdsWriterGate: false)
        let (trusting, _) = try copier("/db/trusting", holdsWriterGate: true)
        #expect(try backup.isWorthCopying(root: root, count: 20_000))
        #expect(try trusting.isWorthCopying(root: root, count: 20_000))
        try store.checkpoint()
        let written = firstLeaf.diskAddress
        #expect(written != 0, "the checkpoint wrote the snapshot's changed leaf")

        #expect {
            _ = try trusting.copy(root: root)
        } throws: { error in
            guard case StrataError.corrupt(_, let offset)? = error as? StrataError else { return false }
            return offset == written
        }
        let rootOffset = try backup.copy(root: root)
        let copied = PageFile(file: backupFile, path: "/db/backup", pageSize: version.file.pageSize, cacheBudget: 1 << 20,
                              closeOnDeinit: false)
        let cursor = Cursor(root: try copied.page(at: rootOffset, level: root.level), file: copied,
                            lifetime: HandleLifetime(), owner: copied)
        var seen = 0
        var ok = try cursor.first()
        while ok {
            #expect(model[[UInt8](cursor.key)] == [UInt8](cursor.value), "key \([UInt8](cursor.key))")
            seen += 1
            ok = try cursor.next()
        }
        #expect(seen == model.count)
        try store.close()
    }

    /// The leaves of tree `name`, how many of them a commit changed since they were written
    /// (held in memory only), and how many are stored as leaf deltas.
    private func leafCounts(_ store: Store, _ name: String) throws -> (leaves: Int, changed: Int, deltas: Int) {
        let version = store.currentVersion
        guard let root = version.trees[name]?.root else { return (0, 0, 0) }
        var leaves = 0, changed = 0, deltas = 0
        func visit(_ page: Page) throws {
            if page.isLeaf {
                leaves += 1
                if page.diskAddress == 0 { changed += 1 }
                if page.diskAddress != 0 && page.deltaBase.offset != 0 { deltas += 1 }
                return
            }
            for i in 0..<page.count { try visit(try TreeRead.nextChild(page, i, version.file)) }
        }
        try visit(root)
        return (leaves, changed, deltas)
    }

    private func leafCount(_ store: Store, _ name: String) throws -> Int {
        let version = store.currentVersion
        guard let root = version.trees[name]?.root else { return 0 }
        func count(_ page: Page) throws -> Int {
            if page.isLeaf { return 1 }
            return try (0..<page.count).reduce(0) { $0 + (try count(try version.file.child(of: page, at: $1, readingAhead: false))) }
        }
        return try count(root)
    }
}
