/// The one error type every Strata API throws.
///
/// Switch on the case to decide what to do; each case documents when it is thrown and what
/// its associated values tell you. Descriptions never include user keys or values.
public enum StrataError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Thrown when the file is not a Strata store at all (wrong magic number), or is too short
    /// to hold a header.
    case notAStrataFile(path: String)
    /// Thrown when the file was written by a newer format version than this library reads.
    case unsupportedFormatVersion(found: UInt32, supported: UInt32)
    /// Thrown when bytes on disk contradict themselves: a checksum mismatch, an offset or length
    /// out of bounds, a tree that does not descend, a frame missing before the durable end.
    /// `offset` is the file offset where the problem was found (or `nil` when unknown).
    case corrupt(String, offset: UInt64?)
    /// Thrown when another process (or another `Store` in this process) holds the write lock.
    case locked(path: String)
    /// Thrown when the operating system reports an I/O error. `errno` is the raw code.
    case ioFailure(operation: String, path: String, errno: Int32)
    /// Thrown when a write fails because the disk is full (`ENOSPC`). Nothing committed is lost.
    case diskFull(path: String)
    /// Thrown when a key is empty or longer than ``StoreLimits/maxKeyLength``.
    case keyTooLarge(length: Int, limit: Int)
    /// Thrown when a value is longer than ``StoreLimits/maxValueLength``.
    case valueTooLarge(length: Int, limit: Int)
    /// Thrown when a named tree does not exist.
    case treeNotFound(String)
    /// Thrown when a tree is created under a name that is already taken.
    case treeExists(String)
    /// Thrown by writes on a store opened read-only, or after a failed `fsync` has put the store
    /// into a failed state (reopen it: a failed sync cannot be retried safely).
    case readOnly(reason: String)
    /// Thrown when a transaction, cursor or store is used after it ended or was closed.
    case closed(String)
    /// Thrown when an argument is invalid (a page size that is not a power of two, …).
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .notAStrataFile(let path): return "not a Strata file: \(path)"
        case .unsupportedFormatVersion(let found, let supported):
            return "file format version \(found) is newer than the supported version \(supported)"
        case .corrupt(let what, let offset):
            if let offset { return "corrupt store at offset \(offset): \(what)" }
            return "corrupt store: \(what)"
        case .locked(let path): return "store is locked for writing by another process: \(path)"
        case .ioFailure(let op, let path, let code): return "I/O error during \(op) on \(path): errno \(code)"
        case .diskFull(let path): return "disk full while writing \(path)"
        case .keyTooLarge(let length, let limit): return "key length \(length) is outside 1...\(limit)"
        case .valueTooLarge(let length, let limit): return "value length \(length) exceeds the limit \(limit)"
        case .treeNotFound(let name): return "no tree named '\(name)'"
        case .treeExists(let name): return "a tree named '\(name)' already exists"
        case .readOnly(let reason): return "store is read-only: \(reason)"
        case .closed(let what): return "\(what) is closed"
        case .invalidArgument(let what): return "invalid argument: \(what)"
        }
    }
}

/// Fixed limits of the format and the engine.
public enum StoreLimits {
    /// The longest key, in bytes. Keys must also be non-empty.
    public static let maxKeyLength = 1024
    /// The longest value, in bytes (64 MiB). Values above a page's inline limit live in overflow frames.
    public static let maxValueLength = 64 << 20
    /// The longest tree name, in UTF-8 bytes.
    public static let maxTreeNameLength = 255
}
