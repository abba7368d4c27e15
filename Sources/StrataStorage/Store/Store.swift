import Synchronization
import Dispatch

/// A Strata store: one file of named, ordered key/value trees with ACID transactions.
///
/// ```swift
/// let store = try Store(path: "app.strata")
/// try store.write { tx in
///     let users = try tx.tree("users", createIfMissing: true)!
///     try users.put(Array("ada".utf8), Array("Ada Lovelace".utf8))
/// }
/// let name = try store.read { try $0.tree("users")?.get(Array("ada".utf8)) }
/// ```
///
/// **Guarantees.** One write transaction at a time (others wait, in order); any number of
/// snapshots, on any threads, never blocked by the writer. A commit is atomic; with
/// ``Durability/full`` it is durable when ``write(_:)`` returns. After a crash the store
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
    var writeLock: (any FileLock)?
    var timer: DispatchSourceTimer?

    // Writer state: read and written only while holding `gate` (or during init).
    var log: LogWriter!
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
    var dirtyBytesSinceCheckpoint: UInt64 = 0
    /// Read by `statistics` from any thread, so kept under its own lock.
    let counterState: Mutex<Counters>
    /// When the status record in the lock file was last written (throttled on commits).
    var lastStatusWrite: ContinuousClock.Instant?

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
        /// Pages copied or created by the last committed transaction.
        public var pagesTouchedByLastCommit: Int
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
        var headerSyncs = 0
        var pagesTouchedByLastCommit = 0
    }

    /// Opens (or creates) the store at `path`, recovering from a crash if there was one.
    ///
    /// Throws ``StrataError/locked(path:)`` if another process has it open for writing,
    /// ``StrataError/notAStrataFile(path:)``, ``StrataError/unsupportedFormatVersion(found:supported:)``
    /// or ``StrataError/corrupt(_:offset:)`` for a file it cannot read.
    public init(path: String, options: StoreOptions = StoreOptions()) throws {
        self.path = path
        self.options = options
        self.isReadOnly = options.readOnly
        self.fs = options.fileSystem
        guard options.pageSize >= 4096, options.pageSize <= Format.maxPageSize,
              options.pageSize & (options.pageSize - 1) == 0 else {
            throw StrataError.invalidArgument("page size \(options.pageSize) is not a power of two in 4096...\(Format.maxPageSize)")
        }
        if !options.readOnly {
            writeLock = try fs.lockExclusive(Store.lockPath(for: path))
        }
        let opened = try Recovery.open(path: path, options: options, fs: fs)
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
        let (version, id) = try shared.withLock { s -> (Version, UInt64) in
            if s.isClosed { throw StrataError.closed("store") }
            let id = s.nextReaderID
            s.nextReaderID += 1
            s.readers[id] = ReaderInfo(txid: s.current.txid, startedAt: .now, deadBytesAtCommit: s.current.deadBytesAtCommit)
            return (s.current, id)
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

    // MARK: Writing

    /// Runs `body` in the write transaction and commits it when `body` returns; rolls back if
    /// it throws or calls ``WriteTransaction/rollback()``. Waits (blocking the thread) while
    /// another write transaction runs. Returns `body`'s result.
    public func write<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
        try checkWritable()
        gate.lock()
        return try runWrite(body)
    }

    /// The `async` form of ``write(_:)``: waiting for the writer gate suspends the task
    /// instead of blocking a thread of the cooperative pool.
    public func write<T>(_ body: (WriteTransaction) throws -> T) async throws -> T {
        try checkWritable()
        await gate.lockAsync()
        return try runWrite(body)
    }

    /// Requires the gate; releases it.
    private func runWrite<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
        var holding = true
        defer { if holding { gate.unlock() } }
        if shared.withLock({ $0.isClosed }) { throw StrataError.closed("store") }
        try log.checkUsable()
        let tx = WriteTransaction(base: currentVersion, store: self, log: log)
        let result: T
        do {
            result = try body(tx)
        } catch {
            abandon(tx)
            throw error
        }
        if tx.isRolledBack {
            abandon(tx)
            return result
        }
        let durableTarget = try commit(tx)
        // A compaction may replace the log once the gate opens: wait on this one.
        let (syncRef, fileRef) = (sync, log.file)
        gate.unlock()
        holding = false
        if let durableTarget { try syncRef.waitDurable(upTo: durableTarget, file: fileRef) }
        return result
    }

    private func checkWritable() throws {
        if isReadOnly { throw StrataError.readOnly(reason: "opened read-only") }
    }

    private func abandon(_ tx: WriteTransaction) {
        // Overflow frames of a rolled-back transaction are garbage at once: they were never
        // counted live (only a commit adds its frames), so there is nothing to subtract.
    }

    /// Appends the commit frame and publishes the new version. Returns the log offset that must
    /// be durable before the commit is acknowledged (`full` durability), else `nil`.
    private func commit(_ tx: WriteTransaction) throws -> UInt64? {
        if tx.record.isEmpty {
            abandon(tx)
            return nil
        }
        let frame: (offset: UInt64, length: UInt64)
        do {
            frame = try tx.record.bytes.withUnsafeBytes {
                try log.append(.commit, txid: tx.transactionID, payload: $0, compress: $0.count >= 512)
            }
        } catch {
            abandon(tx)
            throw error
        }
        var trees = tx.base.trees
        for (name, _) in tx.droppedTrees { trees[name] = nil }
        var touched = 0
        var freed: UInt64 = 0
        var freedOverflow: [UInt64] = []
        for (_, m) in tx.droppedTrees {
            freed += m.freedFrameBytes
            freedOverflow += m.freedOverflow
        }
        for (name, m) in tx.trees {
            trees[name] = Version.Tree(id: m.id, name: name, root: m.root, count: m.count)
            touched += m.pagesTouched
            freed += m.freedFrameBytes
            freedOverflow += m.freedOverflow
        }
        for offset in freedOverflow { freed += overflowFrameLength(offset) }
        liveDelta += Int64(tx.overflowFramesWritten.reduce(0) { $0 + $1.length }) - Int64(freed)
        commitBytesSinceCheckpoint += frame.length
        dirtyBytesSinceCheckpoint += UInt64(touched * currentVersion.file.pageSize)
        counterState.withLock { $0.commits += 1 }
        counterState.withLock { $0.pagesTouchedByLastCommit = touched }
        let version = Version(txid: tx.transactionID, trees: trees, nextTreeID: tx.nextTreeID,
                              file: tx.base.file, deadBytesAtCommit: deadBytes)
        publish(version)
        let now = ContinuousClock.now
        if lastStatusWrite.map({ now - $0 >= .milliseconds(100) }) ?? true {
            lastStatusWrite = now
            writeStatus()
        }
        if commitBytesSinceCheckpoint >= UInt64(options.checkpointLogBytes)
            || dirtyBytesSinceCheckpoint >= UInt64(options.checkpointDirtyBytes) {
            // The commit stands even if the checkpoint fails; a failed sync fails the store and
            // the durability wait below reports it.
            try? checkpointLocked()
        }
        if options.strictChecks {
            let report = try checkLocked()
            if !report.isClean {
                throw StrataError.corrupt("strict check after commit \(tx.transactionID): \(report.problems.joined(separator: "; "))", offset: nil)
            }
        }
        return options.durability == .full ? log.end : nil
    }

    func publish(_ version: Version) {
        shared.withLock { $0.current = version }
    }

    private func overflowFrameLength(_ offset: UInt64) -> UInt64 {
        guard let h = try? FrameReader(file: log.file).header(at: offset, limit: log.end) else { return 0 }
        return h.frameLength
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
            syncCount: counters.activeSync.syncs + counters.retiredSyncs + counters.headerSyncs, commits: counters.commits,
            checkpoints: counters.checkpoints, compactions: counters.compactions,
            pagesTouchedByLastCommit: counters.pagesTouchedByLastCommit,
            cacheBytes: cache.bytes, cacheHits: cache.hits, cacheMisses: cache.misses)
    }

    // MARK: Closing

    /// Checkpoints, compacts if most of the file is garbage, trims the file and releases the
    /// write lock. Like ``checkpoint()`` and ``compact()`` it waits for the writer gate by
    /// blocking its thread: from `async` code, call it off the cooperative pool (or after your
    /// own writes have finished), since a suspended `async` writer queued at the gate needs a
    /// pool thread to run. Snapshots still open keep working until they end.
    ///
    /// If a write or sync failed earlier, the store still closes (the lock is released) but
    /// `close()` throws that failure: in `normal` durability the commits since the last
    /// successful sync may not be on disk, and a silent close would say they are.
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
            writeStatus(closing: true)
            shared.withLock { $0.isClosed = true }
            writeLock?.unlock()
            writeLock = nil
        }
        if let failure = sync.failed { throw failure }
        if commitBytesSinceCheckpoint > 0 || liveDelta != 0 { try checkpointLocked() }
        let size = log.end
        if options.compactOnCloseGarbageRatio < 1, size > 4 << 20,
           Double(deadBytes) >= options.compactOnCloseGarbageRatio * Double(size) {
            try compactLocked()
        }
        try log.trimToEnd()
        try log.syncAll()
    }

    func restartSyncTimer() {
        timer?.cancel()
        timer = nil
        if !isReadOnly && options.durability == .normal { startSyncTimer() }
    }

    private func startSyncTimer() {
        let t = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "strata.sync"))
        let interval = DispatchTimeInterval.milliseconds(max(1, options.syncIntervalMilliseconds))
        t.schedule(deadline: .now() + interval, repeating: interval)
        let sync = self.sync
        let file = self.log.file
        t.setEventHandler {
            if sync.hasUnsyncedWrites && sync.failed == nil { try? sync.syncAll(file: file) }
        }
        t.resume()
        timer = t
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
