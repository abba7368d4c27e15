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
    /// Thrown when the store file does not exist and the open may not create it (a read-only
    /// open, or ``StoreOptions/createIfMissing`` off). `path` is the path that was opened.
    case fileNotFound(path: String)
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

    // Record layer (StrataRecords) and object layer (Strata).

    /// Thrown when a model is built that cannot work: an unknown key path, a missing inverse, a
    /// derived type that does not fit its expression, a cycle among derived attributes.
    /// `property` is `nil` when the problem is the entity itself.
    case invalidModel(entity: String, property: String?, reason: String)
    /// Thrown when a store is opened with a model that differs from the one stored in it and no
    /// migration was asked for. Each difference is one line, naming entity and property.
    case modelMismatch(differences: [String])
    /// Thrown when a value breaks a validation rule (min/max, length, pattern, a custom rule, a
    /// missing required value) or a property cannot be set (a derived attribute).
    case validation(entity: String, property: String?, reason: String)
    /// Thrown when a commit would break a uniqueness constraint (`properties` are the
    /// constrained properties) or a delete rule `deny` (`properties` names the relationship).
    case conflict(entity: String, properties: [String], reason: String)
    /// Thrown when an object identifier names no row (deleted, or never committed).
    case objectNotFound(entity: String, primaryKey: UInt64)
    /// Thrown when a predicate, a sort descriptor or a fetch cannot be parsed or used
    /// (an unknown key path, a transient attribute in a stored fetch, a type mismatch).
    case invalidFetch(String)

    /// A one-line, human-readable explanation; never includes user keys or values.
    public var description: String {
        switch self {
        case .notAStrataFile(let path): return "not a Strata file: \(path)"
        case .unsupportedFormatVersion(let found, let supported):
            return "file format version \(found) is newer than the supported version \(supported)"
        case .corrupt(let what, let offset):
            if let offset { return "corrupt store at offset \(offset): \(what)" }
            return "corrupt store: \(what)"
        case .locked(let path): return "store is locked for writing by another process: \(path)"
        case .fileNotFound(let path): return "no such store file: \(path)"
        case .ioFailure(let op, let path, let code): return "I/O error during \(op) on \(path): errno \(code)"
        case .diskFull(let path): return "disk full while writing \(path)"
        case .keyTooLarge(let length, let limit): return "key length \(length) is outside 1...\(limit)"
        case .valueTooLarge(let length, let limit): return "value length \(length) exceeds the limit \(limit)"
        case .treeNotFound(let name): return "no tree named '\(name)'"
        case .treeExists(let name): return "a tree named '\(name)' already exists"
        case .readOnly(let reason): return "store is read-only: \(reason)"
        case .closed(let what): return "\(what) is closed"
        case .invalidArgument(let what): return "invalid argument: \(what)"
        case .invalidModel(let entity, let property, let reason):
            return "invalid model: \(entity)\(property.map { ".\($0)" } ?? ""): \(reason)"
        case .modelMismatch(let differences):
            return "the store's model differs from the given model (\(differences.count) difference\(differences.count == 1 ? "" : "s")): \(differences.joined(separator: "; "))"
        case .validation(let entity, let property, let reason):
            return "validation failed for \(entity)\(property.map { ".\($0)" } ?? ""): \(reason)"
        case .conflict(let entity, let properties, let reason):
            return "conflict on \(entity) (\(properties.joined(separator: ", "))): \(reason)"
        case .objectNotFound(let entity, let pk): return "no \(entity) with primary key \(pk)"
        case .invalidFetch(let what): return "invalid fetch: \(what)"
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
