#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

/// The one-line status record a writing process keeps in the store's lock file, so that other
/// processes (`strata info`) can see its snapshots without any shared memory or lock:
///
/// ```
/// pid=4242 state=open txid=981 readers=2 oldest_snapshot_txid=12 oldest_snapshot_age_ms=73020 held_back_bytes=5242880 dead_bytes=6291456 log_bytes=9437184 updated_ms=1732263712345 crc=1a2b3c4d
/// ```
///
/// Absent values are `-`. `crc` is the CRC32C (hex) of everything before ` crc=`: the record is
/// rewritten in place without a lock, so a reader can catch it half-written and must retry.
public struct StoreStatus: Sendable, Equatable {
    /// The writing process's id; a record whose process no longer runs is stale.
    public var pid: Int32
    /// `false` once the writer closed the store (the process may live on).
    public var isOpen: Bool
    /// The last transaction the writer had committed.
    public var transactionID: UInt64
    /// Snapshots open in the writing process (0 once it closed the store).
    public var readers: Int
    /// The last transaction the oldest open snapshot includes; `nil` when none is open.
    public var oldestSnapshotTransactionID: UInt64?
    /// The oldest snapshot's age when the record was written.
    public var oldestSnapshotAgeMilliseconds: UInt64?
    /// Bytes the oldest snapshot pins that a newer one would not; 0 when none is open.
    public var heldBackBytes: UInt64
    /// Bytes of the log no commit needs any more.
    public var deadBytes: UInt64
    /// Bytes of the log: the file's length without preallocation.
    public var logBytes: UInt64
    /// Wall-clock time of the write, milliseconds since the Unix epoch (records age).
    public var updatedMilliseconds: UInt64

    /// A record with every field given.
    public init(pid: Int32, isOpen: Bool, transactionID: UInt64, readers: Int, oldestSnapshotTransactionID: UInt64?,
                oldestSnapshotAgeMilliseconds: UInt64?, heldBackBytes: UInt64, deadBytes: UInt64, logBytes: UInt64,
                updatedMilliseconds: UInt64) {
        self.pid = pid
        self.isOpen = isOpen
        self.transactionID = transactionID
        self.readers = readers
        self.oldestSnapshotTransactionID = oldestSnapshotTransactionID
        self.oldestSnapshotAgeMilliseconds = oldestSnapshotAgeMilliseconds
        self.heldBackBytes = heldBackBytes
        self.deadBytes = deadBytes
        self.logBytes = logBytes
        self.updatedMilliseconds = updatedMilliseconds
    }

    /// The record as one line, newline-terminated: the lock file's format (internal, like the
    /// file; ``read(storePath:fileSystem:)`` is the public way to read it).
    var line: String {
        func opt(_ v: UInt64?) -> String { v.map(String.init) ?? "-" }
        let body = "pid=\(pid) state=\(isOpen ? "open" : "closed") txid=\(transactionID) readers=\(readers)"
            + " oldest_snapshot_txid=\(opt(oldestSnapshotTransactionID)) oldest_snapshot_age_ms=\(opt(oldestSnapshotAgeMilliseconds))"
            + " held_back_bytes=\(heldBackBytes) dead_bytes=\(deadBytes) log_bytes=\(logBytes) updated_ms=\(updatedMilliseconds)"
        return body + " crc=" + hex8(CRC32C.checksum(Array(body.utf8))) + "\n"
    }

    /// Parses a record written by ``line``; `nil` if it is incomplete, torn or foreign.
    init?(line text: Substring) {
        guard let crcRange = text.firstRange(of: " crc=") else { return nil }
        let body = text[..<crcRange.lowerBound]
        let crcText = text[crcRange.upperBound...].prefix { $0 != "\n" }
        guard let crc = UInt32(crcText, radix: 16), crc == CRC32C.checksum(Array(body.utf8)) else { return nil }
        var fields: [Substring: Substring] = [:]
        for pair in body.split(separator: " ") {
            guard let eq = pair.firstIndex(of: "=") else { return nil }
            fields[pair[..<eq]] = pair[pair.index(after: eq)...]
        }
        func u64(_ name: Substring) -> UInt64? { fields[name].flatMap { UInt64($0) } }
        func optional(_ name: Substring) -> UInt64?? {
            guard let v = fields[name] else { return nil }
            return v == "-" ? .some(nil) : UInt64(v).map { .some($0) }
        }
        guard let pid = fields["pid"].flatMap({ Int32($0) }), let state = fields["state"],
              let txid = u64("txid"), let readers = fields["readers"].flatMap({ Int($0) }),
              let oldest = optional("oldest_snapshot_txid"), let age = optional("oldest_snapshot_age_ms"),
              let held = u64("held_back_bytes"), let dead = u64("dead_bytes"), let log = u64("log_bytes"),
              let updated = u64("updated_ms")
        else { return nil }
        self.init(pid: pid, isOpen: state == "open", transactionID: txid, readers: readers,
                  oldestSnapshotTransactionID: oldest, oldestSnapshotAgeMilliseconds: age, heldBackBytes: held,
                  deadBytes: dead, logBytes: log, updatedMilliseconds: updated)
    }

    /// Parses a record written by ``line``; `nil` if it is incomplete, torn or foreign.
    init?(line text: String) { self.init(line: text[...]) }

    /// Reads the record from the lock file of the store at `storePath`; `nil` when there is no
    /// lock file or no valid record in it (no writer has written one, or it is being rewritten
    /// on every attempt).
    public static func read(storePath: String, fileSystem: any FileSystem = PosixFileSystem()) -> StoreStatus? {
        let lockPath = Store.lockPath(for: storePath)
        guard fileSystem.fileExists(lockPath), let file = try? fileSystem.open(lockPath, mode: .readOnly) else { return nil }
        defer { file.close() }
        // The writer rewrites in place without a lock: a torn read fails the CRC; try again.
        for _ in 0..<5 {
            var buffer = [UInt8](repeating: 0, count: 1024)
            guard let n = try? buffer.withUnsafeMutableBytes({ try file.read(into: $0, at: 0) }) else { return nil }
            let text = String(decoding: buffer[..<n], as: UTF8.self)
            if let lineEnd = text.firstIndex(of: "\n"), let status = StoreStatus(line: text[..<lineEnd]) {
                return status
            }
            usleep(2_000)
        }
        return nil
    }

    /// Current wall-clock time in milliseconds since the Unix epoch.
    static func nowMilliseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(max(0, ts.tv_sec)) * 1000 + UInt64(max(0, ts.tv_nsec)) / 1_000_000
    }
}

/// A non-negative duration in whole milliseconds.
private func milliseconds(_ d: Duration) -> UInt64 {
    let (seconds, attoseconds) = d.components
    return seconds < 0 ? 0 : UInt64(seconds) * 1000 + UInt64(attoseconds / 1_000_000_000_000_000)
}

private func hex8(_ v: UInt32) -> String {
    let s = String(v, radix: 16)
    return String(repeating: "0", count: 8 - s.count) + s
}

extension Store {
    /// A description of the store now: header, space, trees, and the oldest open snapshot.
    ///
    /// On a writable handle it waits for the writer gate (like ``check()``), so do not call it
    /// inside a write transaction. On a read-only handle it also reads the writing process's
    /// status record from the lock file (``StoreInfo/writerStatus``).
    public func info() throws -> StoreInfo {
        if shared.withLock({ $0.isClosed }) { throw StrataError.closed("store") }
        if isReadOnly {
            // Nothing of the writer state changes after a read-only open: no gate needed.
            var info = try infoLocked()
            info.writerStatus = StoreStatus.read(storePath: path, fileSystem: fs)
            info.writeLock = fs.lockState(Store.lockPath(for: path))
            return info
        }
        gate.lock()
        defer { gate.unlock() }
        if shared.withLock({ $0.isClosed }) { throw StrataError.closed("store") }
        return try infoLocked()
    }

    /// Requires the writer gate (or a read-only handle).
    func infoLocked() throws -> StoreInfo {
        let version = currentVersion
        let logBytes: UInt64
        let fileBytes: UInt64
        if let log {
            logBytes = log.end
            fileBytes = log.allocatedEnd
        } else {
            // A read-only handle has no log: recovery's valid end is where the log ends, and
            // what follows it on disk is a live writer's preallocation (or a torn tail).
            fileBytes = try version.file.file.size()
            logBytes = min(sync.durableEnd, fileBytes)
        }
        let live = liveBytes
        let dead = logBytes > live ? logBytes - live : 0
        let (count, oldest) = oldestReader()
        return StoreInfo(
            path: path, isReadOnly: isReadOnly, formatVersion: header.formatVersion, pageSize: version.file.pageSize,
            fileID: header.fileID, headerSequence: header.sequence, fileBytes: fileBytes, logBytes: logBytes,
            liveBytes: min(live, logBytes), deadBytes: dead, transactionID: version.txid,
            checkpointTransactionID: header.checkpointTxid, checkpointOffset: header.checkpointOffset,
            trees: version.trees.values.sorted { $0.name < $1.name }.map {
                StoreInfo.Tree(name: $0.name, entries: $0.count, height: $0.root.map { $0.level + 1 } ?? 0)
            },
            openSnapshots: count,
            oldestSnapshot: oldest.map {
                // A compaction resets the dead count below what the snapshot saw; clamp at 0.
                StoreInfo.Snapshot(transactionID: $0.txid, age: .now - $0.startedAt,
                                   heldBackBytes: dead > $0.deadBytesAtCommit ? dead - $0.deadBytesAtCommit : 0)
            },
            writerStatus: nil, writeLock: isReadOnly ? .unknown : .lockedExclusively(pid: getpid()))
    }

    private func oldestReader() -> (Int, ReaderInfo?) {
        shared.withLock { s in
            let oldest = s.readers.values.min {
                ($0.txid, $0.startedAt) < ($1.txid, $1.startedAt)
            }
            return (s.readers.count, oldest)
        }
    }

    /// Writes this process's status record (``StoreStatus``) into the lock file, replacing the
    /// previous one, so `strata info` in another process can show the oldest snapshot and the
    /// garbage it holds back. No `fsync`: the record is advisory and a crash makes it stale
    /// anyway (readers check whether `pid` still runs). Errors are ignored for the same reason:
    /// a diagnostic must never fail a commit.
    ///
    /// Requires the writer gate. Pass `closing: true` from ``close()``, so the record says the
    /// store is no longer open for writing although the process may live on. A no-op on a
    /// read-only handle, which must write nothing.
    func writeStatus(closing: Bool = false) {
        // After close the record must keep saying "closed": a late call is a no-op.
        guard !isReadOnly, closing || !shared.withLock({ $0.isClosed }), let info = try? infoLocked() else { return }
        let oldest = closing ? nil : info.oldestSnapshot
        let status = StoreStatus(
            pid: getpid(), isOpen: !closing, transactionID: info.transactionID,
            readers: closing ? 0 : info.openSnapshots, oldestSnapshotTransactionID: oldest?.transactionID,
            oldestSnapshotAgeMilliseconds: oldest.map { milliseconds($0.age) },
            heldBackBytes: oldest?.heldBackBytes ?? 0, deadBytes: info.deadBytes, logBytes: info.logBytes,
            updatedMilliseconds: StoreStatus.nowMilliseconds())
        let bytes = Array(status.line.utf8)
        guard let file = try? fs.open(Store.lockPath(for: path), mode: .create) else { return }
        defer { file.close() }
        // Write first, then cut: a concurrent reader sees either the old line, the new line
        // followed by the old one's tail (ignored after the newline), or a torn line the CRC rejects.
        guard (try? file.write(bytes, at: 0)) != nil else { return }
        try? file.truncate(to: UInt64(bytes.count))
    }
}
