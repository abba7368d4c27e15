/// Checkpoints: writing the pages that commits changed, so the commit log before them becomes
/// garbage and recovery has less to replay (FORMAT.md, "Checkpoint").
extension Store {
    /// Writes every changed page and a checkpoint frame, syncs, and points the header at it.
    /// Runs automatically by log size and on close; call it to bound recovery time.
    public func checkpoint() throws {
        try checkWritableForMaintenance()
        try lockWriter()
        defer { unlockWriter() }
        try checkpointLocked()
    }

    func checkWritableForMaintenance() throws {
        if isReadOnly { throw StrataError.readOnly(reason: "opened read-only") }
        if shared.withLock({ $0.isClosed }) { throw StrataError.closed("store") }
    }

    /// Writes every page still dirty and the checkpoint. Requires the writer gate. `caching`:
    /// as for ``writeDirtyPages(budget:caching:)`` (a close's checkpoint caches nothing: only a
    /// compaction right after it reads the pages again, from the file).
    func checkpointLocked(caching: Bool = true) throws {
        try writableLog().checkUsable()
        _ = try writeDirtyPages(budget: nil, caching: caching)
        try finishCheckpoint()
    }

    /// Writes dirty pages of the current version, children before parents (so each branch
    /// image holds its children's frame offsets), at most `budget` of them (nil: all); true
    /// when none is left dirty. `caching`: clean copies of the pages written go into the page
    /// cache, where readers of later versions find them. Requires the writer gate.
    ///
    /// A page written here is clean from now on: a later commit that changes it copies it like
    /// any written page, and the frame is garbage once a checkpoint no longer reaches it. Its
    /// bytes count as live at once (a page a later commit replaces frees them again), so the
    /// accounting holds however many steps a checkpoint takes, and if it never finishes.
    func writeDirtyPages(budget: Int?, caching: Bool = true) throws -> Bool {
        let log = try writableLog()
        let version = currentVersion
        let cache = version.file.cache
        // Where each page image is encoded before it is appended to the log.
        var scratch = [UInt8](repeating: 0, count: version.file.pageSize)
        // Where a leaf delta is encoded. Deltas go only into a file whose header already says a
        // version that has them (FORMAT.md §13), and only when a quarter page holds one.
        var deltaPayload: [UInt8] = []
        let deltaLimit = header.formatVersion >= Format.leafDeltaVersion ? version.file.pageSize / 4 : 0
        var left = budget ?? Int.max

        // Frames are gathered and written a megabyte at a time (a checkpoint of leaf deltas
        // appends thousands of frames of a few hundred bytes; decision 102). A page takes its
        // frame's offset only once the frame is written: until then no reader, cache entry or
        // later checkpoint may learn an offset that a failed write would take back. A parent's
        // cell does take its child's offset at once (the parent's image needs it); readers reach
        // such a child through the parent's `children`, never the cell, and if the write fails
        // the cells that name frames not written are set back to 0 (``linked``).
        struct Appended {
            var page: Page
            var offset: UInt64
            /// The page's ``Page/diskLength``: its frame's length, plus its base's for a delta.
            var footprint: UInt64
            var delta: Page.LeafDelta?
        }
        var appended: [Appended] = []
        /// Branch cells set to a child's offset since the last frames were applied.
        var linked: [(parent: Page, cell: Int, offset: UInt64)] = []
        func applyWritten() {
            for frame in appended {
                let page = frame.page
                page.diskAddress = frame.offset
                page.diskLength = frame.footprint
                page.deltaBase = frame.delta?.base ?? (0, 0)
                page.deltaKeys = frame.delta?.keys ?? []
                page.forgetOrigin()
                liveDelta += Int64(page.diskLength) - Int64(page.replacedFrame.length)
                replacedBytesSinceCheckpoint -= Int64(page.replacedFrame.length)
                // Readers of later versions reach the page through the cache once a checkpoint
                // publishes clean trees: a copy without children, with search heads.
                if caching { cache.insert(Page.cleanCopy(of: page), at: page.diskAddress) }
            }
            appended.removeAll(keepingCapacity: true)
            linked.removeAll(keepingCapacity: true)
        }

        /// Appends the dirty pages under `page`, then `page` if they all were; the offset of its
        /// frame (nil while it is dirty).
        func write(_ page: Page) throws -> UInt64? {
            if page.diskAddress != 0 { return page.diskAddress }
            if !page.isLeaf {
                var childrenClean = true
                for i in 0..<page.count {
                    guard let child = page.children[i] else { continue }
                    if let offset = try write(child) {
                        page.setChildAddress(i, offset)
                        linked.append((page, i, offset))
                    } else {
                        childrenClean = false
                        if left == 0 { return nil }
                    }
                }
                if !childrenClean { return nil }
            }
            if left == 0 { return nil }
            var delta: Page.LeafDelta?
            if deltaLimit > 0, page.origin != nil {
                if let planned = plannedDeltas.removeValue(forKey: ObjectIdentifier(page)) {
                    delta = planned.delta
                    deltaPayload = planned.payload
                } else {
                    delta = page.leafDelta(limit: deltaLimit, into: &deltaPayload)
                }
            }
            let frame: (offset: UInt64, length: UInt64)
            if let delta {
                frame = try deltaPayload.withUnsafeBytes {
                    try log.append(.leafDelta, txid: version.txid, payload: $0, compress: false)
                }
                appended.append(Appended(page: page, offset: frame.offset, footprint: frame.length + delta.base.length,
                                         delta: delta))
            } else {
                frame = try scratch.withUnsafeMutableBytes {
                    try log.append(.page, txid: version.txid, payload: page.encodeImage(into: $0), compress: true)
                }
                appended.append(Appended(page: page, offset: frame.offset, footprint: frame.length, delta: nil))
            }
            left -= 1
            if appended.count >= 256 {
                try log.writeGathered()
                applyWritten()
            }
            return frame.offset
        }

        var clean = true
        log.startGathering(upTo: 1 << 20)
        do {
            for (_, tree) in version.trees.sorted(by: { $0.key < $1.key }) {
                if let root = tree.root, try write(root) == nil {
                    clean = false
                    if left == 0 { break }
                }
            }
            try log.stopGathering()
        } catch {
            log.abandonGathering()
            // Frames gathered since the last write are gone: no cell keeps an offset of one.
            for link in linked where link.parent.children[link.cell]?.diskAddress != link.offset {
                link.parent.setChildAddress(link.cell, 0)
            }
            throw error
        }
        applyWritten()
        return clean
    }

    /// Computes the leaf delta of every dirty leaf of the current version that has a written
    /// origin, keeping each in ``plannedDeltas`` for the checkpoint to append. Returns what the
    /// deltas change in the space a checkpoint leaves: the bytes of written frames they keep
    /// live as bases, the replaced bytes of the leaves they store, and the bytes of their
    /// frames. Requires the writer gate. Close makes the plan and runs the checkpoint or
    /// compaction that consumes it under one hold of the gate (the pages it names are committed,
    /// so nothing changes them meanwhile); whatever is left is dropped when close ends.
    func planLeafDeltas() -> (keptBytes: UInt64, replacedBytes: UInt64, deltaBytes: UInt64) {
        plannedDeltas = [:]
        let version = currentVersion
        let limit = version.file.pageSize / 4
        var kept: UInt64 = 0, replaced: UInt64 = 0, written: UInt64 = 0
        var payload: [UInt8] = []
        func visit(_ page: Page) {
            if page.diskAddress != 0 { return }
            if !page.isLeaf {
                for child in page.children { if let child { visit(child) } }
                return
            }
            guard page.origin != nil else { return }
            let delta = page.leafDelta(limit: limit, into: &payload)
            plannedDeltas[ObjectIdentifier(page)] = (page, delta == nil ? [] : payload, delta)
            if let delta {
                kept += delta.base.length
                replaced += page.replacedFrame.length
                written += FrameHeader.frameLength(storedLength: payload.count)
            }
        }
        for tree in version.trees.values { if let root = tree.root { visit(root) } }
        return (kept, replaced, written)
    }

    /// Writes the checkpoint frame for the current version, whose pages are all written
    /// (``writeDirtyPages(budget:caching:)`` returned true), syncs, and points the header at it.
    /// Requires the writer gate.
    func finishCheckpoint() throws {
        let log = try writableLog()
        let version = currentVersion
        var entries: [CheckpointRecord.TreeEntry] = []
        for (name, tree) in version.trees.sorted(by: { $0.key < $1.key }) {
            entries.append(CheckpointRecord.TreeEntry(
                id: tree.id, name: name, rootOffset: tree.root?.diskAddress ?? 0, count: tree.count,
                height: UInt8(tree.root.map { $0.level + 1 } ?? 0)))
        }
        // Live now: what was live at the last checkpoint, changed by commits and page writes
        // since, minus the previous checkpoint frame. The commit frames since the last
        // checkpoint become garbage. (An orphaned checkpoint frame is garbage: never counted.)
        let liveBefore = Int64(liveAtCheckpoint) + liveDelta - Int64(checkpointFrame.length)
        let frame = try StoreFileWriter.writeCheckpoint(log: log, txid: version.txid, nextTreeID: version.nextTreeID,
                                                 trees: entries, liveBeforeFrame: UInt64(max(liveBefore, 0)))
        // A failed sync poisons the store (the coordinator remembers it).
        try log.syncAll()
        try rereadHeaderIfShared()
        let next = FileHeader(pageSize: header.pageSize, sequence: header.sequence + 1, checkpointOffset: frame.0,
                              durableEnd: frame.0 + frame.1, checkpointTxid: version.txid, fileID: header.fileID)
        // A failed write of the header slot (a full disk: a new store's first checkpoint is the
        // first write into the unallocated block of slot 1) fails only this checkpoint: the
        // other slot still names the previous one, and a retry writes this slot again. Its
        // sync, like any, poisons the store if it fails.
        try StoreFileWriter.writeHeaderSlot(next, slot: 1 - headerSlot, file: log.file)
        do {
            try log.file.sync()
        } catch {
            let failure = error as? StrataError ?? .ioFailure(operation: "sync (\(error))", path: path, errno: 5)
            sync.fail(failure)
            throw StrataError.poisoned(cause: failure)
        }
        counterState.withLock { $0.headerSyncs += 1 }
        header = next
        headerSlot = 1 - headerSlot
        checkpointFrame = (frame.0, frame.1)
        liveAtCheckpoint = UInt64(max(liveBefore, 0)) + frame.1
        liveDelta = 0
        commitBytesSinceCheckpoint = 0
        dirtyBytesSinceCheckpoint = 0
        replacedBytesSinceCheckpoint = 0
        checkpointInProgress = false
        plannedDeltas = [:]
        reserveCacheForDirtyPages()
        counterState.withLock {
            $0.checkpoints += 1
            $0.lastCheckpointError = nil
        }

        // From now on clean pages are reached through the cache, which bounds their memory;
        // snapshots taken before keep the in-memory tree they started with.
        var trees: [String: Version.Tree] = [:]
        for (name, tree) in version.trees {
            trees[name] = Version.Tree(id: tree.id, name: name, root: tree.root.map { Page.cleanCopy(of: $0) },
                                       count: tree.count)
        }
        publish(Version(txid: version.txid, trees: trees, nextTreeID: version.nextTreeID, file: version.file,
                        deadBytesAtCommit: deadBytes))
        writeStatus()
    }
}
