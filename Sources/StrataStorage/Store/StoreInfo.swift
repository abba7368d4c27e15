/// What `strata info` shows about a store: the header, space, the trees, and the oldest open
/// snapshot with the garbage it holds back (a forgotten long-lived reader is the usual reason a
/// store file keeps growing).
public struct StoreInfo: Sendable {
    /// One tree of the latest commit.
    public struct Tree: Sendable {
        /// The tree's name.
        public var name: String
        /// Number of entries.
        public var entries: UInt64
        /// Levels from root to leaf; 0 for an empty tree.
        public var height: Int
    }

    /// An open snapshot, as the process that opened it sees it.
    public struct Snapshot: Sendable {
        /// The last transaction the snapshot includes.
        public var transactionID: UInt64
        /// How long the snapshot has been open.
        public var age: Duration
        /// Garbage that became garbage after the snapshot's commit: the bytes it pins (in
        /// memory, or in the old file across a compaction) that a newer snapshot would not.
        public var heldBackBytes: UInt64
    }

    /// The store file's path.
    public var path: String
    /// Whether this handle was opened read-only.
    public var isReadOnly: Bool
    /// The file format version recorded in the header.
    public var formatVersion: UInt32
    /// The file's page size in bytes.
    public var pageSize: Int
    /// A random id chosen when the file was created (kept by compaction).
    public var fileID: UInt64
    /// The header slot sequence number (each checkpoint increments it).
    public var headerSequence: UInt64
    /// The file's length on disk (a live writer's file includes preallocated zeros).
    public var fileBytes: UInt64
    /// Where the log ends: the bytes that hold frames. `fileBytes - logBytes` is preallocation.
    public var logBytes: UInt64
    /// Bytes of the log the latest commit still needs (approximate until the next checkpoint:
    /// the commits replayed at open count as live).
    public var liveBytes: UInt64
    /// Bytes of the log no commit needs any more; compaction reclaims them.
    public var deadBytes: UInt64
    /// The last committed transaction.
    public var transactionID: UInt64
    /// The last transaction the newest checkpoint includes (recovery replays the rest).
    public var checkpointTransactionID: UInt64
    /// File offset of the newest checkpoint frame.
    public var checkpointOffset: UInt64
    /// The trees, sorted by name.
    public var trees: [Tree]
    /// Snapshots open on this `Store` handle.
    public var openSnapshots: Int
    /// The oldest of them (lowest transaction id, then earliest start); `nil` when none.
    public var oldestSnapshot: Snapshot?
    /// For a read-only handle: the status record the process that has the store open for
    /// writing last wrote into the lock file (`nil` if there is none). This is how another
    /// process's long-lived snapshots become visible. A writer writes its first record at its
    /// first commit or checkpoint, and the record outlives it: ``writeLock`` says whether a
    /// writer is there now.
    public var writerStatus: StoreStatus?
    /// Whether a process holds the store's write lock now, that is, has it open for writing
    /// (with its process id when the system names it). A writable handle holds it itself.
    public var writeLock: FileLockState

    /// `deadBytes` as a percentage of the log, 0 for an empty log.
    public var deadPercent: Double {
        logBytes == 0 ? 0 : Double(deadBytes) * 100 / Double(logBytes)
    }
}
