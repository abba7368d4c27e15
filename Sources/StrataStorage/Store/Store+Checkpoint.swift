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

    /// Writes every page still dirty and the checkpoint. Requires the writer gate.
    func checkpointLocked() throws {
        try writableLog().checkUsable()
        _ = try writeDirtyPages(budget: nil)
        try finishCheckpoint()
    }

    /// Writes dirty pages of the current version, children before parents (so each branch
    /// image holds its children's frame offsets), at most `budget` of them (nil: all); true
    /// when none is left dirty. Requires the writer gate.
    ///
    /// A page written here is clean from now on: a later commit that changes it copies it like
    /// any written page, and the frame is garbage once a checkpoint no longer reaches it. Its
    /// bytes count as live at once (a page a later commit replaces frees them again), so the
    /// accounting holds however many steps a checkpoint takes, and if it never finishes.
    func writeDirtyPages(budget: Int?) throws -> Bool {
        let log = try writableLog()
        let version = currentVersion
        let cache = version.file.cache
        // Where each page image is encoded before it is appended to the log.
        var scratch = [UInt8](repeating: 0, count: version.file.pageSize)
        var left = budget ?? Int.max

        /// Writes the dirty pages under `page`, then `page` if they all were; whether it is clean.
        func write(_ page: Page) throws -> Bool {
            if page.diskAddress != 0 { return true }
            if !page.isLeaf {
                var childrenClean = true
                for i in 0..<page.count {
                    guard let child = page.children[i] else { continue }
                    if try write(child) {
                        page.setChildAddress(i, child.diskAddress)
                    } else {
                        childrenClean = false
                        if left == 0 { return false }
                    }
                }
                if !childrenClean { return false }
            }
            if left == 0 { return false }
            let frame = try scratch.withUnsafeMutableBytes {
                try log.append(.page, txid: version.txid, payload: page.encodeImage(into: $0), compress: true)
            }
            page.diskAddress = frame.offset
            page.diskLength = frame.length
            liveDelta += Int64(frame.length) - Int64(page.replacedFrame.length)
            replacedBytesSinceCheckpoint -= Int64(page.replacedFrame.length)
            left -= 1
            // Readers of later versions reach the page through the cache once a checkpoint
            // publishes clean trees: a copy without children, with search heads.
            cache.insert(Page.cleanCopy(of: page), at: page.diskAddress)
            return true
        }

        var clean = true
        for (_, tree) in version.trees.sorted(by: { $0.key < $1.key }) {
            if let root = tree.root, !(try write(root)) {
                clean = false
                if left == 0 { break }
            }
        }
        return clean
    }

    /// Writes the checkpoint frame for the current version, whose pages are all written
    /// (``writeDirtyPages(budget:)`` returned true), syncs, and points the header at it.
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
