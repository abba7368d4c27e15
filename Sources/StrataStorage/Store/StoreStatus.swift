#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one-line status record a writing process keeps in the store's lock file, so that other
/// processes (`strata info`) can see its snapshots without any shared memory or lock:
///
/// ```
/// pid=4242 state=open txid=981 readers=2 oldest_snapshot_txid=12 oldest_snapshot_age_ms=73020
///     held_back_bytes=5242880 dead_bytes=6291456 log_bytes=9437184 updated_ms=1732263712345 crc=1a2b3c4d
/// ```
/// (one line, wrapped here).
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
        func opt(_ value: UInt64?) -> String { value.map(String.init) ?? "-" }
        let body = "pid=\(pid) state=\(isOpen ? "open" : "closed") txid=\(transactionID) readers=\(readers)"
            + " oldest_snapshot_txid=\(opt(oldestSnapshotTransactionID))"
            + " oldest_snapshot_age_ms=\(opt(oldestSnapshotAgeMilliseconds))"
            + " held_back_bytes=\(heldBackBytes) dead_bytes=\(deadBytes) log_bytes=\(logBytes)"
            + " updated_ms=\(updatedMilliseconds)"
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
            guard let equals = pair.firstIndex(of: "=") else { return nil }
            fields[pair[..<equals]] = pair[pair.index(after: equals)...]
        }
        func u64(_ name: Substring) -> UInt64? { fields[name].flatMap { UInt64($0) } }
        func optional(_ name: Substring) -> UInt64?? {
            guard let text = fields[name] else { return nil }
            return text == "-" ? .some(nil) : UInt64(text).map { .some($0) }
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
        guard fileSystem.fileExists(lockPath),
              let file = try? fileSystem.open(lockPath, mode: .readOnly) else { return nil }
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
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(max(0, now.tv_sec)) * 1000 + UInt64(max(0, now.tv_nsec)) / 1_000_000
    }
}

/// `value` as eight lowercase hex digits.
private func hex8(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 8 - digits.count) + digits
}
