/// Catching up with other processes' commits (decision 61): the frames they appended after the
/// end of the log this handle knows, replayed as recovery replays them; another process's
/// checkpoint adopted by rebuilding from it; a compaction's new file opened.
extension Store {
    /// Takes in the commits other processes made since this handle last looked (a shared store;
    /// nothing to do for an exclusive one). Returns whether there were any. A write transaction
    /// of this process running now is waited for, unless `waitingForWriter` is false: then
    /// nothing is done (the writer catches up itself). Snapshots and write transactions do this
    /// themselves: call it to learn of other processes' commits without starting either.
    /// Throws ``StrataError/closed(_:)`` once the store is closed, and what replaying the
    /// other processes' frames finds (``StrataError/corrupt(_:offset:)``, I/O errors).
    @discardableResult
    ///
    /// Do not call it with `waitingForWriter` inside a write transaction of this store: the
    /// transaction holds what it waits for.
    public func refresh(waitingForWriter: Bool = true) throws -> Bool {
        if shared.withLock({ $0.isClosed }) { throw StrataError.closed("store") }
        guard options.sharing != .exclusive else { return false }
        if waitingForWriter {
            gate.lock()
        } else if !gate.tryLock() {
            return false
        }
        defer { gate.unlock() }
        return try refreshHoldingGate()
    }

    /// Requires the gate: catches up without the write lock, unless the file was replaced
    /// (only a holder of the lock may switch files), when it takes the lock if it is free.
    func refreshHoldingGate() throws -> Bool {
        if shared.withLock({ $0.isClosed }) { return false }
        let before = currentVersion.txid
        if fileWasReplaced && !isReadOnly {
            guard try takeWriteLockOnce() else { return false }
            defer {
                writeLock?.unlock()
                writeLock = nil
            }
            try catchUpHoldingLock()
        } else {
            try catchUp(holdingWriteLock: false)
        }
        return currentVersion.txid != before
    }

    /// A shared store's snapshot starts from the newest commit of any process: when no write
    /// transaction of this process holds the gate (a snapshot never waits for one), catch up.
    ///
    /// A failure here (a frame another process is writing now, a header read while it writes
    /// one, damage) leaves the snapshot on the last state taken in: the writer's locked
    /// catch-up judges damage and reports it; ``refresh(waitingForWriter:)`` throws it.
    func refreshForSnapshot() {
        _ = try? refresh(waitingForWriter: false)
    }

    /// Whether another file than this handle's is at its path now (another process compacted).
    /// One `stat` of the path: the identity of the open file is asked once per file.
    private var fileWasReplaced: Bool {
        let storeFile = self.storeFile
        let file = ObjectIdentifier(storeFile)
        if openFileIdentity?.file != file { openFileIdentity = (file, storeFile.identity) }
        guard let mine = openFileIdentity?.identity, let onDisk = fs.identity(of: path) else { return false }
        return onDisk != mine
    }

    /// The file this handle reads and appends to: the log's, or a read-only handle's.
    private var storeFile: any StorageFile { log?.file ?? currentVersion.file.file }

    /// Where the log this handle knows ends: where its next frame goes, or where a read-only
    /// handle stopped reading.
    private var knownLogEnd: UInt64 { log?.end ?? logEndAtOpen }

    private func adoptLogEnd(_ end: UInt64) {
        if let log { log.adoptEnd(end) } else { logEndAtOpen = max(logEndAtOpen, end) }
    }

    /// Requires the gate. Replays the frames other processes appended after the end of the
    /// log this handle knows onto its trees and publishes the result. A read-only handle of a
    /// shared store follows the writers the same way, and opens a compaction's new file itself
    /// (it takes no lock, as any read-only open).
    func catchUp(holdingWriteLock: Bool) throws {
        guard options.sharing != .exclusive else { return }
        if fileWasReplaced {
            if holdingWriteLock || isReadOnly { try adoptReplacedFile() }
            return
        }
        let version = currentVersion
        let start = knownLogEnd
        let file = storeFile
        let reader = FrameReader(file: file)
        // The common case, nothing new: one read, of where the next frame's header would be.
        guard try reader.header(at: start, limit: .max) != nil else { return }
        let size = try file.size()
        guard let first = try reader.header(at: start, limit: size), try reader.payload(of: first, at: start) != nil
        else { return }
        var state = Recovery.ReplayState(nextTreeID: version.nextTreeID, lastTxid: version.txid)
        for (name, committed) in version.trees {
            // Owned by the first commit caught up: no page of a published version has that owner.
            let tree = MutableTree(id: committed.id, name: name, root: committed.root, count: committed.count,
                                   txid: version.txid + 1, file: version.file)
            state.trees[name] = tree
            state.byID[committed.id] = tree
            state.touched.append(tree)
        }
        let end = try Recovery.replay(&state, from: start, size: size, reader: reader, file: version.file)
        if state.passedCheckpoint {
            try adoptCheckpoint(holdingWriteLock: holdingWriteLock)
        } else {
            if state.lastTxid != version.txid {
                // Everything that can throw first: a failure leaves nothing counted twice.
                let delta = try state.liveDelta(reader: reader, validEnd: end.offset)
                var trees: [String: Version.Tree] = [:]
                var dirtied = 0
                var replaced: Int64 = 0
                for (name, tree) in state.trees {
                    trees[name] = Version.Tree(id: tree.id, name: name, root: tree.root, count: tree.count)
                }
                for tree in state.touched {
                    dirtied += tree.pagesDirtied
                    replaced += tree.replacedFrameBytes
                }
                liveDelta += delta
                replacedBytesSinceCheckpoint += replaced
                dirtyBytesSinceCheckpoint += UInt64(dirtied * version.file.pageSize)
                adoptLogEnd(end.offset)
                commitBytesSinceCheckpoint += end.offset - start
                publish(Version(txid: state.lastTxid, trees: trees, nextTreeID: state.nextTreeID, file: version.file,
                                deadBytesAtCommit: deadBytes))
                reserveCacheForDirtyPages()
            } else {
                // Only pages or overflow values of another process's unfinished work: the next
                // frame goes after them all the same.
                commitBytesSinceCheckpoint += end.offset - start
                adoptLogEnd(end.offset)
            }
        }
        announceOtherProcessCommits(after: version.txid)
    }

    /// Requires the gate. Another process wrote a checkpoint: rebuild from the one the header
    /// names (over this handle's page cache) and the commits after it. Without the write lock
    /// the header may still name the one before (the other process writes its slot after the
    /// checkpoint frame): the state is the same; the header is read again before this handle
    /// writes one (``finishCheckpoint()``).
    private func adoptCheckpoint(holdingWriteLock: Bool) throws {
        let file = currentVersion.file
        let (newHeader, slot, size) = try Recovery.readHeader(file: storeFile, path: path, options: options)
        let rebuilt = try Recovery.rebuild(header: newHeader, size: size, pageFile: file,
                                           checkingTail: holdingWriteLock, readOnly: false)
        adoptRecoveredAccounting(header: newHeader, slot: slot, checkpointFrame: rebuilt.checkpointFrame,
                                 liveAtCheckpoint: rebuilt.liveAtCheckpoint, liveDelta: rebuilt.replayLiveDelta,
                                 replayedBytes: rebuilt.replayedBytes)
        adoptLogEnd(rebuilt.logEnd)
        publish(rebuilt.version)
        reserveCacheForDirtyPages()
    }

    /// Requires the gate and (unless read-only) the write lock. Another process compacted: the
    /// store is a new file. Open it as an open of this handle's kind does; snapshots of the old
    /// one keep it open until they end.
    private func adoptReplacedFile() throws {
        let before = currentVersion.txid
        let opened = try Recovery.open(path: path, options: options, fs: fs)
        if let newLog = opened.log {
            newLog.preallocateWithZeros = options.durability == .full
            counterState.withLock {
                $0.retiredSyncs += sync.syncs
                $0.activeSync = opened.sync
            }
            log = newLog
            sync = opened.sync
        }
        logEndAtOpen = opened.logEnd
        adoptRecoveredAccounting(header: opened.header, slot: opened.headerSlot, checkpointFrame: opened.checkpointFrame,
                                 liveAtCheckpoint: opened.liveAtCheckpoint, liveDelta: opened.replayLiveDelta,
                                 replayedBytes: opened.replayedBytes)
        restartSyncTimer()
        publish(opened.version)
        reserveCacheForDirtyPages()
        announceOtherProcessCommits(after: before)
    }

    /// The header and space accounting of a state recovery rebuilt (from another process's
    /// checkpoint, or a compaction's new file): this handle's dirty pages were dropped with it.
    private func adoptRecoveredAccounting(header newHeader: FileHeader, slot: Int,
                                          checkpointFrame frame: (offset: UInt64, length: UInt64),
                                          liveAtCheckpoint live: UInt64, liveDelta delta: Int64, replayedBytes: UInt64) {
        header = newHeader
        headerSlot = slot
        checkpointFrame = frame
        liveAtCheckpoint = live
        liveDelta = delta
        commitBytesSinceCheckpoint = replayedBytes
        dirtyBytesSinceCheckpoint = 0
        replacedBytesSinceCheckpoint = 0
        checkpointInProgress = false
    }

    /// Before a checkpoint of a shared store writes a header slot: the newest header on disk,
    /// which another process's checkpoint may have written after this handle last read it.
    func rereadHeaderIfShared() throws {
        guard options.sharing != .exclusive else { return }
        let (onDisk, slot, _) = try Recovery.readHeader(file: writableLog().file, path: path, options: options)
        if onDisk.sequence >= header.sequence {
            header = onDisk
            headerSlot = slot
        }
    }
}
