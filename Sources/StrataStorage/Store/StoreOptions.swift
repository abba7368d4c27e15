/// How a store is opened. The defaults suit an application database.
public struct StoreOptions: Sendable {
    /// When commits return relative to `fdatasync`; `.full` by default.
    public var durability: Durability = .full
    /// Open for reading only: nothing is written, not even the recovery of a torn tail, and no
    /// write lock is taken, so a live store can be inspected.
    public var readOnly = false
    /// Create the file if it does not exist.
    public var createIfMissing = true
    /// Page size for a new file (a power of two in 4096...32768); an existing file keeps its own.
    public var pageSize = Format.defaultPageSize
    /// Byte budget of page memory: the decompressed-page cache and the pages changed since the
    /// last checkpoint, which share it (the cache shrinks by what they take, and a checkpoint
    /// starts when they reach half of it).
    public var cacheBytes = 256 << 20
    /// A checkpoint starts when the commit log since the last one reaches this many bytes...
    public var checkpointLogBytes = 64 << 20
    /// ...or when this many bytes of pages have become dirty since the last one (or half of
    /// ``cacheBytes``, if that is less).
    public var checkpointDirtyBytes = 256 << 20
    /// Once a checkpoint has started, each commit writes at least this many of its pages (and
    /// at least twice as many as the commit made dirty), so the checkpoint's work is spread
    /// over the commits that follow instead of stalling one of them; the commit that leaves
    /// no page dirty finishes it. A checkpoint finishes at once when the log reaches twice
    /// ``checkpointLogBytes``, and ``Store/checkpoint()`` and ``Store/close()`` always do.
    public var checkpointStepPages = 256
    /// `normal` durability: how often written commits are synced, in milliseconds.
    public var syncIntervalMilliseconds = 20
    /// On close, compact the file when at least this fraction of it is garbage (1 disables),
    /// counting the log since the last checkpoint as garbage (close would checkpoint it; a
    /// compaction instead writes the live data once, without that checkpoint). Files of 4 MiB
    /// or less are never compacted on close: the rewrite would save too little. (A file that is
    /// nearly all log and replaced pages is compacted on close instead of checkpointed, as
    /// long as it and its dirty pages pass 4 MiB: the compaction then writes little more than
    /// the checkpoint would.)
    public var compactOnCloseGarbageRatio = 0.4
    /// Run the full structural check after every commit (slow; for tests, like bbolt's StrictMode).
    public var strictChecks = false
    /// Whether other processes may write the store too: ``ProcessSharing/exclusive`` (the
    /// default: one writing process, checked once at open) or ``ProcessSharing/shared(lockTimeout:)``
    /// (the lock taken per write transaction, each transaction starting from every process's
    /// newest commit).
    public var sharing: ProcessSharing = .exclusive
    /// Where file I/O goes; tests substitute a simulated file system.
    public var fileSystem: any FileSystem = PosixFileSystem()

    /// The default options.
    public init() {}

    /// The default options, with `durability`.
    public init(durability: Durability) { self.durability = durability }
}
