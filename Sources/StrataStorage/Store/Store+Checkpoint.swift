/// Checkpoints: writing the pages that commits changed, so the commit log before them becomes
/// garbage and recovery has less to replay (FORMAT.md, "Checkpoint").
extension Store {
    /// Writes every changed page and a checkpoint frame, syncs, and points the header at it.
    /// Runs automatically by log size and on close; call it to bound recovery time.
    public func checkpoint() throws {
        try checkWritableForMaintenance()
        gate.lock()
        defer { gate.unlock() }
        try checkpointLocked()
    }

    func checkWritableForMaintenance() throws {
        if isReadOnly { throw StrataError.readOnly(reason: "opened read-only") }
        if shared.withLock({ $0.isClosed }) { throw StrataError.closed("store") }
    }

    /// Requires the writer gate.
    func checkpointLocked() throws {
        try log.checkUsable()
        let version = currentVersion
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: version.file.pageSize, alignment: 16)
        defer { scratch.deallocate() }
        var written: [Page] = []
        var replacedBytes: UInt64 = 0
        var writtenBytes: UInt64 = 0

        /// Children before parents, so each branch image holds its children's frame offsets.
        func write(_ page: Page) throws {
            if page.diskAddress != 0 { return }
            if !page.isLeaf {
                for i in 0..<page.count {
                    if let child = page.children[i] {
                        try write(child)
                        page.setChildAddress(i, child.diskAddress)
                    }
                }
            }
            let length = page.encodeImage(into: scratch)
            let frame = try log.append(.page, txid: version.txid, payload: UnsafeRawBufferPointer(start: scratch, count: length), compress: true)
            page.diskAddress = frame.offset
            page.diskLength = frame.length
            replacedBytes += page.replacedFrame.length
            writtenBytes += frame.length
            written.append(page)
        }

        // If this checkpoint fails before its header slot is written, pages written before the
        // failure keep their frames (a retry skips them): count them into the running delta, or
        // the next total misses them. (An orphaned checkpoint frame is garbage: never counted.)
        var finished = false
        defer { if !finished { liveDelta += Int64(writtenBytes) - Int64(replacedBytes) } }
        var entries: [CheckpointRecord.TreeEntry] = []
        for (name, t) in version.trees.sorted(by: { $0.key < $1.key }) {
            if let root = t.root { try write(root) }
            entries.append(CheckpointRecord.TreeEntry(
                id: t.id, name: name, rootOffset: t.root?.diskAddress ?? 0, count: t.count,
                height: UInt8(t.root.map { $0.level + 1 } ?? 0)))
        }
        // Live now: what was live at the last checkpoint, changed by commits since, plus the new
        // pages; minus the frames they replaced and the previous checkpoint frame. The commit
        // frames since the last checkpoint become garbage.
        let liveBefore = Int64(liveAtCheckpoint) + liveDelta + Int64(writtenBytes) - Int64(replacedBytes) - Int64(checkpointFrame.length)
        let frame = try StoreFileWriter.writeCheckpoint(log: log, txid: version.txid, nextTreeID: version.nextTreeID,
                                                 trees: entries, liveBeforeFrame: UInt64(max(liveBefore, 0)))
        // A failed sync poisons the store (the coordinator remembers it).
        try log.syncAll()
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
        finished = true
        counterState.withLock { $0.headerSyncs += 1 }
        header = next
        headerSlot = 1 - headerSlot
        checkpointFrame = (frame.0, frame.1)
        liveAtCheckpoint = UInt64(max(liveBefore, 0)) + frame.1
        liveDelta = 0
        commitBytesSinceCheckpoint = 0
        dirtyBytesSinceCheckpoint = 0
        counterState.withLock {
            $0.checkpoints += 1
            $0.lastCheckpointError = nil
        }

        // From now on clean pages are reached through the cache, which bounds their memory;
        // snapshots taken before keep the in-memory tree they started with.
        let cache = version.file.cache
        for page in written {
            // A copy, so that the cached page gets search heads and no children.
            cache.insert(Page.cleanCopy(of: page), at: page.diskAddress)
        }
        var trees: [String: Version.Tree] = [:]
        for (name, t) in version.trees {
            trees[name] = Version.Tree(id: t.id, name: name, root: t.root.map { Page.cleanCopy(of: $0) }, count: t.count)
        }
        publish(Version(txid: version.txid, trees: trees, nextTreeID: version.nextTreeID, file: version.file,
                        deadBytesAtCommit: deadBytes))
        writeStatus()
    }
}

extension Page {
    /// A copy of a written branch page that reaches its children through the cache.
    static func cleanCopy(of page: Page) -> Page {
        let copy = Page(copying: page, owner: 0)
        copy.children = page.isLeaf ? [] : Array(repeating: nil, count: page.count)
        copy.diskAddress = page.diskAddress
        copy.diskLength = page.diskLength
        copy.buildSearchHeads()
        return copy
    }
}
