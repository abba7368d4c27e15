/// `strata check`: verifies every frame's checksums, key order in and across pages, that no
/// page is reachable twice, uniform leaf depth, entry counts, overflow values, and the
/// live/dead byte totals (bbolt's `Tx.Check`).
public struct CheckReport: Sendable {
    /// What is wrong, one line each; empty when the store is sound.
    public var problems: [String] = []
    /// Whether no problem was found.
    public var isClean: Bool { problems.isEmpty }
    /// Frames read from the start of the log, each checksum-verified.
    public var frames = 0
    /// Tree pages visited.
    public var pagesVisited = 0
    /// Entries found, across all trees.
    public var entries: UInt64 = 0
    /// Where the log ends, in bytes from the start of the file (preallocated zeros excluded).
    public var fileBytes: UInt64 = 0
    /// Bytes that the newest commit still needs (reachable frames, the log since the last
    /// checkpoint, the header).
    public var liveBytes: UInt64 = 0
    /// Bytes of the log the newest commit no longer needs; compaction reclaims them.
    public var deadBytes: UInt64 { fileBytes > liveBytes ? fileBytes - liveBytes : 0 }
}
