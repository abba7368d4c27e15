/// How a file is opened.
public enum FileOpenMode: Sendable {
    /// Read only; the file must exist.
    case readOnly
    /// Read and write; the file must exist.
    case readWrite
    /// Read and write; the file is created (empty) if it does not exist.
    case create
}

/// One open file. All of Strata's file I/O goes through this protocol, so that tests can
/// substitute a simulated file that loses unsynced writes on a simulated crash
/// (LevelDB's `Env`, bbolt's failpoints).
///
/// Implementations must be safe to call from several threads at once: positioned reads
/// (`read(into:at:)`) run concurrently with each other and with appends.
public protocol StorageFile: AnyObject, Sendable {
    /// Reads up to `buffer.count` bytes at `offset`; returns how many were read (fewer only at
    /// end of file).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int
    /// Writes all of `bytes` at `offset`, extending the file if needed.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws
    /// Makes every write so far durable (`fdatasync`).
    func sync() throws
    /// The file's current length in bytes.
    func size() throws -> UInt64
    /// Sets the file's length, cutting or zero-extending it.
    func truncate(to length: UInt64) throws
    /// Closes the file; later calls fail.
    func close()
    /// A hint: start writing `length` bytes at `offset` to the device now, without waiting
    /// (Linux `sync_file_range(SYNC_FILE_RANGE_WRITE)`), so a later ``sync()`` has less left
    /// to wait for. Durability still comes only from `sync()`; errors surface there.
    func startWriteback(at offset: UInt64, length: UInt64)
}

extension StorageFile {
    /// No hint: `sync()` writes everything back.
    public func startWriteback(at offset: UInt64, length: UInt64) {}
}

/// A held advisory lock; released by `unlock()` or when the object is deallocated.
public protocol FileLock: AnyObject, Sendable {
    /// Releases the lock; calling it again does nothing.
    func unlock()
}

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
}

/// What ``FileSystem/lockState(_:)`` found.
public enum FileLockState: Sendable, Equatable {
    /// Nobody holds an exclusive lock on the file.
    case unlocked
    /// Someone holds an exclusive lock; `pid` is the process that took it, when the system
    /// names it.
    case lockedExclusively(pid: Int32?)
    /// The file system cannot tell.
    case unknown
}

extension FileSystem {
    /// Cannot tell: ``FileLockState/unknown``.
    public func lockState(_ path: String) -> FileLockState { .unknown }
}

extension StorageFile {
    /// Reads exactly `buffer.count` bytes or throws `corrupt` (the file is shorter than a
    /// structure inside it claims).
    func readExactly(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
        let n = try read(into: buffer, at: offset)
        guard n == buffer.count else {
            throw StrataError.corrupt("read of \(buffer.count) bytes past end of file", offset: offset)
        }
    }

    func write(_ bytes: [UInt8], at offset: UInt64) throws {
        try bytes.withUnsafeBytes { try write($0, at: offset) }
    }
}
