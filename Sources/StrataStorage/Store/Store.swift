import Synchronization
import Dispatch

/// A Strata store: one file of named, ordered key/value trees with ACID transactions.
///
/// ```swift
/// let store = try Store(path: "app.strata")
/// try store.write { tx in
///     let users = try tx.treeCreatingIfMissing("users")
///     try users.put(Array("ada".utf8), Array("Ada Lovelace".utf8))
/// }
/// let name = try store.read { try $0.tree("users")?.get(Array("ada".utf8)) }
/// ```
///
/// **Guarantees.** One write transaction at a time (others wait, in order); any number of
/// snapshots, on any threads, never blocked by the writer. A commit is atomic; with
/// ``Durability/full`` it is durable when ``write(_:)-81bh`` returns. After a crash the store
/// opens with exactly a prefix of the committed transactions. A second process that opens the
/// store for writing gets ``StrataError/locked(path:)``; any process may open it read-only.
///
/// **Not guaranteed.** A snapshot may observe a `full` commit a moment before its `fdatasync`
/// completes; if that sync fails, the store refuses further writes and a reopen shows the
/// durable state. Compaction blocks writers (not readers) while it runs.
public final class Store: @unchecked Sendable {
    /// The store file's path.
    public let path: String
    /// The options the store was opened with.
    public let options: StoreOptions
    /// Whether this handle was opened read-only.
    public let isReadOnly: Bool
    let fs: any FileSystem
    let gate = WriterGate()
    let shared: Mutex<SharedState>
    /// `shared.current.txid`, published after each new version (stored under the lock, read
    /// without it): every fault of a context asks whether a newer commit exists, and taking the
    /// lock for each would make every fault pay for it.
    let publishedTransactionID: Atomic<UInt64>
    var writeLock: (any FileLock)?
    var timer: DispatchSourceTimer?

    // Writer state: read and written only while holding `gate` (or during init).
    /// The log's writer; nil on a read-only handle, whose every write path is refused first
    /// (``writableLog()``).
    var log: LogWriter?
    var sync: SyncCoordinator
    var header: FileHeader
    var headerSlot: Int
    var checkpointFrame: (offset: UInt64, length: UInt64)
    /// Live bytes recorded by the last checkpoint (header region, reachable frames, its frame).
    var liveAtCheckpoint: UInt64
    /// Change in live bytes since: overflow frames written minus frames that became garbage.
    var liveDelta: Int64 = 0
    var commitBytesSinceCheckpoint: UInt64 = 0
    /// Read-only handles: where the log ended when recovery read it.
    var logEndAtOpen: UInt64 = 0
    /// Bytes of pages made dirty since the last checkpoint (each page counted when it becomes
    /// dirty, not again for each commit that changes it while dirty).
    var dirtyBytesSinceCheckpoint: UInt64 = 0
    /// Frame bytes of written pages that commits since the last checkpoint replaced with
    /// copies not yet written: still counted live, garbage once the checkpoint writes the
    /// copies. What close adds to decide whether a checkpoint would leave the file due for
    /// compaction. Approximate (0 after a reopen; a page replaced in one commit and retired
    /// in a later one counts in both), which only moves that decision.
    var replacedBytesSinceCheckpoint: Int64 = 0
    /// Leaf deltas close computed to choose between a checkpoint and a compaction
    /// (``planLeafDeltas()``), kept for the checkpoint that follows to append: each dirty leaf
    /// planned (held, so its identity stays its own) with its delta, or nil to be written whole.
    var plannedDeltas: [ObjectIdentifier: (page: Page, payload: [UInt8], delta: Page.LeafDelta?)] = [:]
    /// An automatic checkpoint is under way: commits write some of its pages each, and the one
    /// that leaves none dirty writes the checkpoint frame (docs/decisions.md,
    /// decision 37).
    var checkpointInProgress = false
    /// Read by `statistics` from any thread, so kept under its own lock.
    let counterState: Mutex<Counters>
    /// When the status record in the lock file was last written (throttled on commits).
    var lastStatusWrite: ContinuousClock.Instant?
    /// After automatic checkpoints failed in a row: commits to let pass before the next try.
    var checkpointRetryCountdown = 0
    var consecutiveCheckpointFailures = 0
    /// The open log file and its device and inode (a shared store compares them with its path's).
    var openFileIdentity: (file: ObjectIdentifier, identity: FileIdentity?)?
    /// Who is told of other processes' commits (``addOtherProcessCommitObserver(_:)``).
    let sharingObservers = Mutex(SharingObservers())

    struct SharingObservers {
        var observers: [UInt64: @Sendable (ClosedRange<UInt64>) -> Void] = [:]
        var next: UInt64 = 1
    }

    struct SharedState {
        var current: Version
        var readers: [UInt64: ReaderInfo] = [:]
        var nextReaderID: UInt64 = 1
        var isClosed = false
    }

    struct ReaderInfo {
        var txid: UInt64
        var startedAt: ContinuousClock.Instant
        var deadBytesAtCommit: UInt64
    }

    /// Running totals, for benchmarks, tests and `strata info`.
    public struct Statistics: Sendable {
        /// `fdatasync` calls on the store file so far (commits, checkpoints, header writes).
        public var syncCount: Int
        /// Transactions committed since this handle opened.
        public var commits: Int
        /// Checkpoints written since this handle opened.
        public var checkpoints: Int
        /// Compactions since this handle opened (backups not included).
        public var compactions: Int
        /// Leaf pages those compactions copied as they were stored (from trees no write had
        /// changed since their pages were written) instead of rebuilding and compressing them.
        public var pagesCopiedAsStored: Int
        /// Pages copied or created by the last committed transaction.
        public var pagesTouchedByLastCommit: Int
        /// Automatic checkpoints (run by a commit) that failed. The commit stands; the
        /// checkpoint is retried by later commits (backing off) and by ``Store/close()``.
        public var checkpointFailures: Int
        /// The error of the last checkpoint that failed, `nil` once one succeeded since.
        public var lastCheckpointError: StrataError?
        /// Bytes of decompressed pages the cache holds now.
        public var cacheBytes: Int
        /// Page reads the cache answered.
        public var cacheHits: Int
        /// Page reads that went to the file.
        public var cacheMisses: Int
    }

    struct Counters {
        /// The coordinator of the current file, and the syncs of the ones compaction retired.
        var activeSync: SyncCoordinator
        var retiredSyncs = 0
        var commits = 0
        var checkpoints = 0
        var compactions = 0
        var pagesCopiedAsStored = 0
        var headerSyncs = 0
        var pagesTouchedByLastCommit = 0
        var checkpointFailures = 0
        var lastCheckpointError: StrataError?
    }

    /// Opens (or creates) the store at `path`, recovering from a crash if there was one.
    ///
    /// Throws ``StrataError/locked(path:)`` if another process has it open for writing,
    /// ``StrataError/fileNotFound(path:)`` if there is no file and the open may not create one
    /// (read-only, or ``StoreOptions/createIfMissing`` off), ``StrataError/notAStrataFile(path:)``,
    /// ``StrataError/unsupportedFormatVersion(found:supported:)`` or
    /// ``StrataError/corrupt(_:offset:)`` for a file it cannot read, ``StrataError/ioFailure(operation:path:errno:)``
    /// when the file cannot be read, and ``StrataError/invalidArgument(_:)`` for a page size
    /// that is not a power of two in 4096...32768.
    public init(path: String, options: StoreOptions = StoreOptions()) throws {
        self.path = path
        self.options = options
        self.isReadOnly = options.readOnly
        self.fs = options.fileSystem
        guard options.pageSize >= 4096, options.pageSize <= Format.maxPageSize,
              options.pageSize & (options.pageSize - 1) == 0 else {
            throw StrataError.invalidArgument(
                "page size \(options.pageSize) is not a power of two in 4096...\(Format.maxPageSize)")
        }
        var lock: (any FileLock)?
        let opened: Recovery.Opened
        if options.readOnly {
            opened = try Recovery.open(path: path, options: options, fs: fs)
        } else {
            let lockPath = Store.lockPath(for: path)
            let lockExisted = fs.fileExists(lockPath)
            lock = try Store.takeWriteLock(lockPath, timeout: options.sharing.lockTimeout, fs: fs)
            do {
                opened = try Recovery.open(path: path, options: options, fs: fs)
            } catch {
                // A failed open (no such store, not a store) leaves no lock file it created.
                // Removed while still held, so no other opener can have locked this one.
                if !lockExisted { try? fs.remove(lockPath) }
                lock?.unlock()
                throw error
            }
        }
        if options.sharing != .exclusive {
            // Held again for each write transaction; recovery needed it (it cuts the tail).
            lock?.unlock()
            lock = nil
            // Another process's compaction is seen only as another file at the path: a file
            // system that cannot tell files apart would let this handle write to the old one.
            guard fs.identity(of: path) != nil, opened.version.file.file.identity != nil else {
                throw StrataError.invalidArgument(
                    "sharing a store between processes needs a file system that tells files apart "
                        + "(device and inode); \(type(of: fs)) cannot")
            }
        }
        writeLock = lock
        sync = opened.sync
        counterState = Mutex(Counters(activeSync: opened.sync))
        header = opened.header
        headerSlot = opened.headerSlot
        checkpointFrame = opened.checkpointFrame
        liveAtCheckpoint = opened.liveAtCheckpoint
        commitBytesSinceCheckpoint = opened.replayedBytes
        logEndAtOpen = opened.logEnd
        liveDelta = opened.replayLiveDelta
        shared = Mutex(SharedState(current: opened.version))
        publishedTransactionID = Atomic(opened.version.txid)
        log = opened.log
        log?.preallocateWithZeros = options.durability == .full
        if !isReadOnly && options.durability == .normal { startSyncTimer() }
    }

    deinit {
        if !shared.withLock({ $0.isClosed }) { try? close() }
    }

    /// The path of the lock file that guards writers (it survives compaction's rename).
    public static func lockPath(for path: String) -> String { path + ".lock" }

    // MARK: Reading

    /// Starts a snapshot of the latest commit. End it with ``ReadTransaction/close()`` or by
    /// dropping the last reference.
    public func snapshot() throws -> ReadTransaction {
        if options.sharing != .exclusive { refreshForSnapshot() }
        let (version, id) = try shared.withLock { state -> (Version, UInt64) in
            if state.isClosed { throw StrataError.closed("store") }
            let id = state.nextReaderID
            state.nextReaderID += 1
            state.readers[id] = ReaderInfo(txid: state.current.txid, startedAt: .now,
                                           deadBytesAtCommit: state.current.deadBytesAtCommit)
            return (state.current, id)
        }
        return ReadTransaction(version: version, store: self, readerID: id)
    }

    /// Runs `body` on a snapshot of the latest commit and returns its result.
    public func read<T>(_ body: (ReadTransaction) throws -> T) throws -> T {
        let tx = try snapshot()
        defer { tx.close() }
        return try body(tx)
    }

    func unregisterReader(_ id: UInt64) {
        shared.withLock { _ = $0.readers.removeValue(forKey: id) }
    }

    var currentVersion: Version { shared.withLock { $0.current } }

    /// The id of the last committed transaction: a snapshot started now would see it. Cheap
    /// (one atomic load), so a caller can tell whether a snapshot it holds is still the latest.
    public var lastCommittedTransactionID: UInt64 { publishedTransactionID.load(ordering: .acquiring) }

    // MARK: Writing

    /// Runs `body` in the write transaction and commits it when `body` returns; rolls back if
    /// it throws or calls ``WriteTransaction/rollback()``. Waits (blocking the thread) while
    /// another write transaction runs. Returns `body`'s result.
    ///
    /// Throws what `body` throws; ``StrataError/transactionFailed(cause:)`` if an operation
    /// failed the transaction (even if `body` caught that error); the commit's own errors
    /// (`diskFull`, `ioFailure`: nothing was committed, the store stays usable);
    /// ``StrataError/poisoned(cause:)`` once a sync failed;
    /// ``StrataError/strictCheckFailed(transactionID:problems:)`` (the commit stands) with
    /// ``StoreOptions/strictChecks``. The transaction and its handles must not be used after
    /// `body` returns (see ``WriteTransaction``).
    public func write<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
        try checkWritable()
        try lockWriter()
        return try runWrite(body)
    }

    /// The `async` form of ``write(_:)``: waiting for the writer gate suspends the task
    /// instead of blocking a thread of the cooperative pool.
    public func write<T>(_ body: (WriteTransaction) throws -> T) async throws -> T {
        try checkWritable()
        try await lockWriterAsync()
        return try runWrite(body)
    }

    private func checkWritable() throws {
        if isReadOnly { throw StrataError.readOnly(reason: "opened read-only") }
    }

    // MARK: Space accounting

    /// Bytes of the file that hold data some commit still needs.
    var liveBytes: UInt64 {
        UInt64(max(0, Int64(liveAtCheckpoint) + liveDelta)) + commitBytesSinceCheckpoint
    }

    var deadBytes: UInt64 {
        let end = log?.end ?? 0
        let live = liveBytes
        return end > live ? end - live : 0
    }

    // MARK: Statistics

    /// The running totals now. The cache figures restart with each compaction (a new file, a new
    /// cache).
    public var statistics: Statistics {
        let cache = currentVersion.file.cache.statistics
        let counters = counterState.withLock { $0 }
        return Statistics(
            syncCount: counters.activeSync.syncs + counters.retiredSyncs + counters.headerSyncs,
            commits: counters.commits, checkpoints: counters.checkpoints, compactions: counters.compactions,
            pagesCopiedAsStored: counters.pagesCopiedAsStored,
            pagesTouchedByLastCommit: counters.pagesTouchedByLastCommit,
            checkpointFailures: counters.checkpointFailures, lastCheckpointError: counters.lastCheckpointError,
            cacheBytes: cache.bytes, cacheHits: cache.hits, cacheMisses: cache.misses)
    }

    // MARK: Closing

    /// Checkpoints, compacts if most of the file is garbage, trims the file and releases the
    /// write lock. Like ``checkpoint()`` and ``compact()`` it waits for the writer gate by
    /// blocking its thread: from `async` code, call it off the cooperative pool (or after your
    /// own writes have finished), since a suspended `async` writer queued at the gate needs a
    /// pool thread to run. Snapshots still open keep working until they end.
    ///
    /// If a sync failed earlier, the store still closes (the lock is released) but `close()`
    /// throws ``StrataError/poisoned(cause:)``: in `normal` durability the commits since the last
    /// successful sync may not be on disk, and a silent close would say they are. If the final
    /// checkpoint fails (a full disk), `close()` throws that error and still releases the lock;
    /// every commit is in the log and the next open replays it.
    public func close() throws {
        if isReadOnly {
            shared.withLock { $0.isClosed = true }
            return
        }
        gate.lock()
        defer { gate.unlock() }
        if shared.withLock({ $0.isClosed }) { return }
        timer?.cancel()
        timer = nil
        defer {
            plannedDeltas = [:]
            writeStatus(closing: true)
            shared.withLock { $0.isClosed = true }
            writeLock?.unlock()
            writeLock = nil
        }
        if let failure = sync.failed { throw StrataError.poisoned(cause: failure) }
        if let timeout = options.sharing.lockTimeout {
            // Another process may be writing. Without the lock in time, the commits stay in the
            // log for the next writer to checkpoint: nothing is lost by not waiting longer.
            guard let lock = try? Store.takeWriteLock(Store.lockPath(for: path), timeout: timeout, fs: fs) else {
                // What this handle wrote is synced all the same (no lock needed for that).
                try writableLog().syncAll()
                return
            }
            writeLock = lock
            try catchUpHoldingLock()
        }
        // The log since the last checkpoint is garbage once a checkpoint is written, and so are
        // the written pages that commits replaced with copies (the checkpoint adds about as many
        // bytes). If the file would be due for compaction after the checkpoint, compact at once:
        // the compaction writes every live page from the trees in memory, so a checkpoint first
        // would write the dirty pages twice (decision 39). And when nearly all of the file is
        // garbage-to-be (a fresh store whose content is its log), compact whether or not it
        // would be due: the compaction then writes little beyond the dirty pages the checkpoint
        // would write, and leaves no log behind. The growth of a checkpoint that writes
        // never-written pages is not known before their compressed size is, so without this a
        // fresh store under 4 MiB of log checkpointed, found the file due, and compacted: every
        // page written twice.
        // A leaf a checkpoint writes as a leaf delta keeps its base live and adds only the
        // delta: the plan says which leaves those are, so the choice counts them as they are.
        var replaced = UInt64(max(replacedBytesSinceCheckpoint, 0))
        var growth = replaced
        if header.formatVersion >= Format.leafDeltaVersion {
            let plan = planLeafDeltas()
            replaced -= min(replaced, plan.keptBytes)
            growth = growth - min(growth, plan.replacedBytes) + plan.deltaBytes
        }
        let garbage = deadBytes + commitBytesSinceCheckpoint + replaced
        let end = try writableLog().end
        let mostlyGarbage = options.compactOnCloseGarbageRatio < 1 && garbage >= end / 5 * 4
            && end + dirtyBytesSinceCheckpoint > 4 << 20
        if mostlyGarbage || compactionDueOnClose(garbage: garbage, growth: growth) {
            plannedDeltas = [:]
            try compactLocked()
        } else {
            if commitBytesSinceCheckpoint > 0 || liveDelta != 0 { try checkpointLocked(caching: false) }
            if compactionDueOnClose(garbage: deadBytes) { try compactLocked() }
        }
        let log = try writableLog()
        try log.trimToEnd()
        try log.syncAll()
    }

    /// Whether close should compact a file holding `garbage` dead bytes once it has grown by
    /// `growth` (see ``StoreOptions/compactOnCloseGarbageRatio``).
    private func compactionDueOnClose(garbage: UInt64, growth: UInt64 = 0) -> Bool {
        let size = (log?.end ?? 0) + growth
        return options.compactOnCloseGarbageRatio < 1 && size > 4 << 20
            && Double(garbage) >= options.compactOnCloseGarbageRatio * Double(size)
    }

    /// The log's writer, or ``StrataError/readOnly(reason:)`` on a read-only handle.
    func writableLog() throws -> LogWriter {
        guard let log else { throw StrataError.readOnly(reason: "opened read-only") }
        return log
    }

    func restartSyncTimer() {
        timer?.cancel()
        timer = nil
        if !isReadOnly && options.durability == .normal { startSyncTimer() }
    }

    private func startSyncTimer() {
        let syncTimer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "strata.sync"))
        let interval = DispatchTimeInterval.milliseconds(max(1, options.syncIntervalMilliseconds))
        syncTimer.schedule(deadline: .now() + interval, repeating: interval)
        let sync = self.sync
        guard let file = self.log?.file else { return }
        syncTimer.setEventHandler {
            if sync.hasUnsyncedWrites && sync.failed == nil { try? sync.syncAll(file: file) }
        }
        syncTimer.resume()
        timer = syncTimer
    }
}

extension Store {
    /// Tests only: drops the store as a crash would (no checkpoint, no trim), releasing the lock.
    func abandonForTesting() {
        timer?.cancel()
        shared.withLock { $0.isClosed = true }
        writeLock?.unlock()
    }
}
