/// Space reclamation by compaction, and backup: both copy a snapshot's live data into a fresh
/// file of packed pages (FORMAT.md, "Compaction").
extension Store {
    /// What a compaction or backup did.
    public struct CopyReport: Sendable {
        /// The length of the store's log before the copy, in bytes; 0 for a backup.
        public var bytesBefore: UInt64
        /// The length of the new file, in bytes.
        public var bytesAfter: UInt64
        /// Entries copied, across all trees.
        public var entries: UInt64
        /// The last transaction the copy includes.
        public var transactionID: UInt64
    }

    /// Rewrites the store into a fresh file holding only live data, then atomically replaces
    /// the file with it. Readers carry on (snapshots taken before keep the old file open until
    /// they end); writers wait until it finishes. A crash at any point leaves either the old or
    /// the new file, each complete.
    @discardableResult
    public func compact() throws -> CopyReport {
        try checkWritableForMaintenance()
        try lockWriter()
        defer { unlockWriter() }
        return try compactLocked()
    }

    /// Requires the writer gate.
    @discardableResult
    func compactLocked() throws -> CopyReport {
        let oldLog = try writableLog()
        try oldLog.checkUsable()
        let before = oldLog.end
        // Commits waiting for a group-commit sync of the old file get it before the swap.
        try oldLog.syncAll()
        let version = currentVersion
        let tmp = path + ".compact"
        try? fs.remove(tmp)
        let file = try fs.open(tmp, mode: .create)
        let written: Written
        let newVersion: Version
        do {
            written = try Store.writeCopy(of: version, to: file, path: tmp, sequence: header.sequence + 1,
                                          fileID: header.fileID, holdsWriterGate: true)
            // Everything that reads the new file happens before the rename: once it is the
            // store, only a failed directory sync (a sync: it poisons) can go wrong.
            let pageFile = PageFile(file: file, path: path, pageSize: version.file.pageSize,
                                    cacheBudget: options.cacheBytes)
            var trees: [String: Version.Tree] = [:]
            for (name, tree) in version.trees {
                guard let entry = written.trees.first(where: { $0.name == name }) else { continue }
                let root = entry.rootOffset == 0
                    ? nil : try pageFile.page(at: entry.rootOffset, level: Int(entry.height) - 1)
                trees[name] = Version.Tree(id: tree.id, name: name, root: root, count: tree.count)
            }
            newVersion = Version(txid: version.txid, trees: trees, nextTreeID: version.nextTreeID, file: pageFile,
                                 deadBytesAtCommit: 0)
            try fs.rename(tmp, to: path)
        } catch {
            file.close()
            try? fs.remove(tmp)
            throw error
        }
        // From the rename on, the new file is the store: switch to it before anything else can
        // fail, so no later commit goes to the old, unlinked file.
        let newSync = SyncCoordinator(durableEnd: written.end)
        let newLog = LogWriter(file: file, path: path, end: written.end, allocatedEnd: written.end, sync: newSync)
        newLog.preallocateWithZeros = options.durability == .full
        log = newLog
        counterState.withLock {
            $0.retiredSyncs += sync.syncs
            $0.activeSync = newSync
        }
        sync = newSync
        header = written.header
        headerSlot = 0
        checkpointFrame = written.checkpointFrame
        liveAtCheckpoint = written.end
        liveDelta = 0
        commitBytesSinceCheckpoint = 0
        dirtyBytesSinceCheckpoint = 0
        replacedBytesSinceCheckpoint = 0
        checkpointInProgress = false
        plannedDeltas = [:]
        counterState.withLock {
            $0.compactions += 1
            $0.pagesCopiedAsStored += written.pagesCopiedAsStored
        }
        counterState.withLock { $0.headerSyncs += 2 }
        restartSyncTimer()
        publish(newVersion)
        do {
            try fs.syncDirectory(containing: path)
        } catch let error as StrataError {
            // The rename may not be durable: the store cannot tell which file a crash would
            // leave, so it takes no more writes until reopened.
            newSync.fail(error)
            throw StrataError.poisoned(cause: error)
        }
        writeStatus()
        return CopyReport(bytesBefore: before, bytesAfter: written.end, entries: written.entries,
                          transactionID: version.txid)
    }

    /// Writes a consistent copy of the latest commit to `destination` (a new file; an existing
    /// one is replaced) while writers carry on, like SQLite's backup API. The copy is a compact
    /// store that opens like any other.
    @discardableResult
    public func backup(to destination: String) throws -> CopyReport {
        let snapshot = try self.snapshot()
        defer { snapshot.close() }
        let version = snapshot.version
        let tmp = destination + ".backup-tmp"
        try? fs.remove(tmp)
        let file = try fs.open(tmp, mode: .create)
        defer { file.close() }
        let written = try Store.writeCopy(of: version, to: file, path: tmp, sequence: 1,
                                          fileID: StoreFileWriter.randomFileID(), holdsWriterGate: false)
        try fs.rename(tmp, to: destination)
        try fs.syncDirectory(containing: destination)
        return CopyReport(bytesBefore: 0, bytesAfter: written.end, entries: written.entries,
                          transactionID: version.txid)
    }

    struct Written {
        var end: UInt64
        var header: FileHeader
        var checkpointFrame: (UInt64, UInt64)
        var trees: [CheckpointRecord.TreeEntry]
        var entries: UInt64
        /// Leaves copied with their stored payloads (``StoredTreeCopy``).
        var pagesCopiedAsStored: Int
    }

    /// Writes `version`'s trees as packed pages (a tree no write changed, copied as stored:
    /// ``StoredTreeCopy``), a checkpoint and header slot 0, all synced. `holdsWriterGate`: no
    /// checkpoint can run during the copy (a compaction; a backup runs beside the writer).
    static func writeCopy(of version: Version, to file: any StorageFile, path: String, sequence: UInt64,
                          fileID: UInt64, holdsWriterGate: Bool) throws -> Written {
        try file.truncate(to: 0)
        let sync = SyncCoordinator(durableEnd: Format.logStart)
        let log = LogWriter(file: file, path: path, end: Format.logStart, allocatedEnd: 0, sync: sync)
        log.writebackStride = 8 << 20
        log.gatherWrites(upTo: 1 << 20)
        var entries: [CheckpointRecord.TreeEntry] = []
        var total: UInt64 = 0
        let compressor = PageCompressor(pageSize: version.file.pageSize)
        let storedCopy = StoredTreeCopy(file: version.file, log: log, txid: version.txid,
                                        holdsWriterGate: holdsWriterGate, compressor: compressor)
        for (name, tree) in version.trees.sorted(by: { $0.key < $1.key }) {
            if let root = tree.root, try storedCopy.isWorthCopying(root: root, count: tree.count) {
                let rootOffset = try storedCopy.copy(root: root)
                total += tree.count
                entries.append(CheckpointRecord.TreeEntry(id: tree.id, name: name, rootOffset: rootOffset, count: tree.count,
                                                          height: UInt8(root.level + 1)))
                continue
            }
            let builder = TreeBuilder(log: log, pageSize: version.file.pageSize, txid: version.txid,
                                      compressor: compressor)
            let cursor = Cursor(root: tree.root, file: version.file, lifetime: HandleLifetime(), owner: version)
            var ok = try cursor.first()
            while ok {
                if cursor.isOverflow {
                    try builder.add(key: cursor.key, inlineValue: nil, overflow: try cursor.copyValue())
                } else {
                    try builder.add(key: cursor.key, inlineValue: cursor.value, overflow: nil)
                }
                ok = try cursor.next()
            }
            let (root, height) = try builder.finish()
            guard builder.count == tree.count else {
                throw StrataError.corrupt("tree '\(name)' has \(builder.count) entries, its catalog says \(tree.count)",
                                          offset: nil)
            }
            total += builder.count
            entries.append(CheckpointRecord.TreeEntry(id: tree.id, name: name, rootOffset: root, count: tree.count,
                                                      height: UInt8(height)))
        }
        let frame = try StoreFileWriter.writeCheckpoint(log: log, txid: version.txid, nextTreeID: version.nextTreeID,
                                                 trees: entries, liveBeforeFrame: log.end)
        try log.trimToEnd()
        try log.syncAll()
        let header = FileHeader(pageSize: UInt32(version.file.pageSize), sequence: sequence, checkpointOffset: frame.0,
                                durableEnd: frame.0 + frame.1, checkpointTxid: version.txid, fileID: fileID)
        try StoreFileWriter.writeHeader(header, slot: 0, file: file)
        // Slot 1 must not hold an older header with a higher sequence: zero it.
        try file.write([UInt8](repeating: 0, count: Format.slotLength), at: FileHeader.slotOffset(1))
        try file.sync()
        return Written(end: log.end, header: header, checkpointFrame: frame, trees: entries, entries: total,
                       pagesCopiedAsStored: storedCopy.leavesCopied)
    }
}
