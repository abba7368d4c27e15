#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Several processes writing one store (``ProcessSharing/shared(lockTimeout:)``; docs/decisions.md,
/// decision 61). The write lock is taken per write transaction; whoever takes it first brings its
/// trees up to the newest commit of any process by replaying, as recovery does, the frames other
/// processes appended after the end of the log it knows. Pages are immutable by offset, so its
/// page cache stays valid; a checkpoint another process wrote is adopted by rebuilding from it,
/// and a compaction (a new file renamed over the path) by opening the new file.
extension Store {
    // MARK: The writer's section

    /// Takes the writer gate and, for a shared store, the write lock (waiting up to the
    /// timeout), and catches up with other processes' commits. Balanced by ``unlockWriter()``.
    func lockWriter() throws {
        gate.lock()
        do {
            try enterSharedSection()
        } catch {
            gate.unlock()
            throw error
        }
    }

    /// ``lockWriter()`` from `async` code: neither wait blocks a thread of the cooperative pool.
    func lockWriterAsync() async throws {
        await gate.lockAsync()
        do {
            guard let timeout = options.sharing.lockTimeout, !isReadOnly else { return }
            let deadline = ContinuousClock.now + timeout
            var pause = Duration.microseconds(100)
            while true {
                if try takeWriteLockOnce() { break }
                guard ContinuousClock.now < deadline else { throw StrataError.locked(path: Store.lockPath(for: path)) }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .milliseconds(10))
            }
            try catchUpHoldingLock()
        } catch {
            gate.unlock()
            throw error
        }
    }

    /// Releases what ``lockWriter()`` took.
    func unlockWriter() {
        if options.sharing != .exclusive, !isReadOnly {
            writeLock?.unlock()
            writeLock = nil
        }
        gate.unlock()
    }

    /// Requires the gate. Takes the write lock (waiting up to the timeout) and catches up.
    private func enterSharedSection() throws {
        guard let timeout = options.sharing.lockTimeout, !isReadOnly else { return }
        writeLock = try Store.takeWriteLock(Store.lockPath(for: path), timeout: timeout, fs: fs)
        do {
            try catchUpHoldingLock()
        } catch {
            writeLock?.unlock()
            writeLock = nil
            throw error
        }
    }

    /// The write lock at `lockPath`: at once, or (`timeout` set: a shared store) trying again
    /// with growing pauses until `timeout` passes.
    static func takeWriteLock(_ lockPath: String, timeout: Duration?, fs: any FileSystem) throws -> any FileLock {
        guard let timeout else { return try fs.lockExclusive(lockPath) }
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.microseconds(100)
        while true {
            do {
                return try fs.lockExclusive(lockPath)
            } catch StrataError.locked {
                guard ContinuousClock.now < deadline else { throw StrataError.locked(path: lockPath) }
                usleep(UInt32(pause.microseconds))
                pause = min(pause * 2, .milliseconds(10))
            }
        }
    }

    /// One non-blocking try for the write lock; false when another process holds it.
    private func takeWriteLockOnce() throws -> Bool {
        do {
            writeLock = try fs.lockExclusive(Store.lockPath(for: path))
            return true
        } catch StrataError.locked {
            return false
        }
    }

    /// Requires the gate and the write lock: catches up, then cuts whatever another process
    /// left after the log (its preallocated zeros, or a frame it died writing).
    func catchUpHoldingLock() throws {
        if shared.withLock({ $0.isClosed }) { return }
        try catchUp(holdingWriteLock: true)
        let size = try log.file.size()
        let clean = try bytesAreZero(at: log.end, size: size)
        if size != log.allocatedEnd || !clean { try log.cutTail() }
    }

    /// Whether the file holds only zeros in the 16 bytes at `offset` (nothing has been written
    /// there since this handle preallocated it).
    private func bytesAreZero(at offset: UInt64, size: UInt64) throws -> Bool {
        guard offset < size else { return true }
        var bytes = [UInt8](repeating: 0, count: 16)
        let n = try bytes.withUnsafeMutableBytes { try log.file.read(into: $0, at: offset) }
        return !bytes[..<n].contains { $0 != 0 }
    }

    // MARK: Catching up

    /// Takes in the commits other processes made since this handle last looked (a shared store;
    /// nothing to do for an exclusive one). Returns whether there were any. A write transaction
    /// of this process running now is waited for, unless `waitingForWriter` is false: then
    /// nothing is done (the writer catches up itself). Snapshots and write transactions do this
    /// themselves: call it to learn of other processes' commits without starting either.
    /// Throws ``StrataError/closed(_:)`` once the store is closed, and what replaying the
    /// other processes' frames finds (``StrataError/corrupt(_:offset:)``, I/O errors).
    @discardableResult
    public func refresh(waitingForWriter: Bool = true) throws -> Bool {
        if shared.withLock({ $0.isClosed }) { throw StrataError.closed("store") }
        guard options.sharing != .exclusive, !isReadOnly else { return false }
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
    private func refreshHoldingGate() throws -> Bool {
        if shared.withLock({ $0.isClosed }) { return false }
        let before = currentVersion.txid
        if fileWasReplaced {
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
    func refreshForSnapshot() throws {
        guard options.sharing != .exclusive, !isReadOnly, gate.tryLock() else { return }
        defer { gate.unlock() }
        _ = try refreshHoldingGate()
    }

    /// Whether another file than this handle's is at its path now (another process compacted).
    /// One `stat` of the path: the identity of the open file is asked once per file.
    private var fileWasReplaced: Bool {
        let file = ObjectIdentifier(log.file)
        if openFileIdentity?.file != file { openFileIdentity = (file, log.file.identity) }
        guard let mine = openFileIdentity?.identity, let onDisk = fs.identity(of: path) else { return false }
        return onDisk != mine
    }

    /// Requires the gate. Replays the frames other processes appended after the end of the
    /// log this handle knows onto its trees and publishes the result.
    func catchUp(holdingWriteLock: Bool) throws {
        guard options.sharing != .exclusive, !isReadOnly else { return }
        if fileWasReplaced {
            if holdingWriteLock { try adoptReplacedFile() }
            return
        }
        let version = currentVersion
        let start = log.end
        let reader = FrameReader(file: log.file)
        // The common case, nothing new: one read, of where the next frame's header would be.
        guard try reader.header(at: start, limit: .max) != nil else { return }
        let size = try log.file.size()
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
                var trees: [String: Version.Tree] = [:]
                var dirtied = 0
                for (name, tree) in state.trees {
                    trees[name] = Version.Tree(id: tree.id, name: name, root: tree.root, count: tree.count)
                }
                for tree in state.touched {
                    dirtied += tree.pagesDirtied
                    replacedBytesSinceCheckpoint += tree.replacedFrameBytes
                }
                liveDelta += try state.liveDelta(reader: reader, validEnd: end.offset)
                dirtyBytesSinceCheckpoint += UInt64(dirtied * version.file.pageSize)
                log.adoptEnd(end.offset)
                commitBytesSinceCheckpoint += end.offset - start
                publish(Version(txid: state.lastTxid, trees: trees, nextTreeID: state.nextTreeID, file: version.file,
                                deadBytesAtCommit: deadBytes))
                reserveCacheForDirtyPages()
            } else {
                // Only pages or overflow values of another process's unfinished work: the next
                // frame goes after them all the same.
                commitBytesSinceCheckpoint += end.offset - start
                log.adoptEnd(end.offset)
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
        let (newHeader, slot, size) = try Recovery.readHeader(file: log.file, path: path, options: options)
        let rebuilt = try Recovery.rebuild(header: newHeader, size: size, pageFile: file,
                                           checkingTail: holdingWriteLock, readOnly: false)
        header = newHeader
        headerSlot = slot
        checkpointFrame = rebuilt.checkpointFrame
        liveAtCheckpoint = rebuilt.liveAtCheckpoint
        liveDelta = rebuilt.replayLiveDelta
        commitBytesSinceCheckpoint = rebuilt.replayedBytes
        dirtyBytesSinceCheckpoint = 0
        replacedBytesSinceCheckpoint = 0
        checkpointInProgress = false
        log.adoptEnd(rebuilt.logEnd)
        publish(rebuilt.version)
        reserveCacheForDirtyPages()
    }

    /// Requires the gate and the write lock. Another process compacted: the store is a new
    /// file. Open it as a writable open does; snapshots of the old one keep it open until they end.
    private func adoptReplacedFile() throws {
        let before = currentVersion.txid
        let opened = try Recovery.open(path: path, options: options, fs: fs)
        guard let newLog = opened.log else { return }
        newLog.preallocateWithZeros = options.durability == .full
        counterState.withLock {
            $0.retiredSyncs += sync.syncs
            $0.activeSync = opened.sync
        }
        log = newLog
        sync = opened.sync
        header = opened.header
        headerSlot = opened.headerSlot
        checkpointFrame = opened.checkpointFrame
        liveAtCheckpoint = opened.liveAtCheckpoint
        liveDelta = opened.replayLiveDelta
        commitBytesSinceCheckpoint = opened.replayedBytes
        dirtyBytesSinceCheckpoint = 0
        replacedBytesSinceCheckpoint = 0
        checkpointInProgress = false
        restartSyncTimer()
        publish(opened.version)
        reserveCacheForDirtyPages()
        announceOtherProcessCommits(after: before)
    }

    /// Before a checkpoint of a shared store writes a header slot: the newest header on disk,
    /// which another process's checkpoint may have written after this handle last read it.
    func rereadHeaderIfShared() throws {
        guard options.sharing != .exclusive else { return }
        let (onDisk, slot, _) = try Recovery.readHeader(file: log.file, path: path, options: options)
        if onDisk.sequence >= header.sequence {
            header = onDisk
            headerSlot = slot
        }
    }

    // MARK: Observers

    /// Calls `observer` each time this handle takes in commits of other processes, with the
    /// range of their transaction ids, on the thread that caught up and while the store's
    /// writer gate is held: it must not read or write the store (post the range somewhere and
    /// return). Returns a token for ``removeOtherProcessCommitObserver(_:)``.
    @discardableResult
    public func addOtherProcessCommitObserver(_ observer: @escaping @Sendable (ClosedRange<UInt64>) -> Void)
        -> UInt64 {
        sharingObservers.withLock { state in
            let token = state.next
            state.next += 1
            state.observers[token] = observer
            return token
        }
    }

    /// Stops calling the observer `token` names.
    public func removeOtherProcessCommitObserver(_ token: UInt64) {
        sharingObservers.withLock { _ = $0.observers.removeValue(forKey: token) }
    }

    private func announceOtherProcessCommits(after txid: UInt64) {
        let now = currentVersion.txid
        guard now > txid else { return }
        let observers = sharingObservers.withLock { Array($0.observers.values) }
        for observer in observers { observer((txid + 1)...now) }
    }

    // MARK: Waiting

    /// Returns the id of the newest commit once it is after `transactionID` — a commit of this
    /// process or, for a shared store, of any — or `nil` when `timeout` passes first. Woken by
    /// changes to the file (inotify on Linux), with a poll every 100 ms as a backstop and
    /// elsewhere. Throws what catching up throws (``refresh()``), and
    /// ``StrataError/closed(_:)`` once the store is closed; returns `nil` when the task is cancelled.
    public func waitForCommit(after transactionID: UInt64, timeout: Duration? = nil) async throws -> UInt64? {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        let signal = FileChangeSignal(path: path)
        while !Task.isCancelled {
            if shared.withLock({ $0.isClosed }) { throw StrataError.closed("store") }
            if options.sharing != .exclusive, !isReadOnly, gate.tryLock() {
                defer { gate.unlock() }
                _ = try refreshHoldingGate()
            }
            let now = lastCommittedTransactionID
            if now > transactionID { return now }
            var wait = Duration.milliseconds(100)
            if let deadline {
                let left = deadline - ContinuousClock.now
                if left <= .zero { return nil }
                wait = min(wait, left)
            }
            if options.sharing == .exclusive || isReadOnly {
                try? await Task.sleep(for: min(wait, .milliseconds(5)))
            } else {
                await signal.wait(upTo: wait)
            }
        }
        return nil
    }
}

extension Duration {
    /// Whole microseconds, at least 1, for `usleep`.
    var microseconds: Int64 {
        let (seconds, attoseconds) = components
        return max(1, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
    }
}
