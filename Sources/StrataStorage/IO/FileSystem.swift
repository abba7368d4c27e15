/// The directory operations Strata needs, behind one protocol (see ``StorageFile``).
public protocol FileSystem: Sendable {
    /// Opens the file at `path` in `mode`; throws ``StrataError/fileNotFound(path:)`` when it is
    /// missing (unless `mode` is `.create`; a file system may also report that as
    /// ``StrataError/ioFailure(operation:path:errno:)`` with `ENOENT`, which the store turns
    /// into `fileNotFound`), ``StrataError/ioFailure(operation:path:errno:)`` when it cannot be
    /// opened.
    func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile
    /// Whether a file exists at `path`.
    func fileExists(_ path: String) -> Bool
    /// Atomically replaces `destination` with `source`.
    func rename(_ source: String, to destination: String) throws
    /// Removes the file at `path`; removing a missing file is not an error.
    func remove(_ path: String) throws
    /// Makes creations, renames and removals in the directory holding `path` durable.
    func syncDirectory(containing path: String) throws
    /// Takes an exclusive, non-blocking advisory lock on `path` (created if missing).
    /// Throws ``StrataError/locked(path:)`` when another holder has it.
    func lockExclusive(_ path: String) throws -> any FileLock
    /// Takes a shared, non-blocking advisory lock (readers of a store being compacted use it).
    func lockShared(_ path: String) throws -> any FileLock
    /// Whether someone holds an exclusive lock on `path` right now, found without taking or
    /// disturbing any lock (a lock taken to test would make a writer's open fail meanwhile).
    /// The default implementation cannot tell: ``FileLockState/unknown``.
    func lockState(_ path: String) -> FileLockState
    /// Which file is at `path` now, `nil` when there is none or the file system cannot tell
    /// (then a store shared between processes cannot notice another process's compaction, and
    /// keeps the file it opened).
    func identity(of path: String) -> FileIdentity?
}

extension FileSystem {
    /// Cannot tell: ``FileLockState/unknown``.
    public func lockState(_ path: String) -> FileLockState { .unknown }

    /// Cannot tell: `nil`.
    public func identity(of path: String) -> FileIdentity? { nil }
}
