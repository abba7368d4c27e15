import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The real file system: `pread`/`pwrite`/`fdatasync`/`flock`.
public struct PosixFileSystem: FileSystem {
    /// The real file system of this process.
    public init() {}

    /// Opens `path` with `open(2)` in `mode`; a created file gets permissions 0644.
    public func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
        let flags: Int32
        switch mode {
        case .readOnly: flags = O_RDONLY
        case .readWrite: flags = O_RDWR
        case .create: flags = O_RDWR | O_CREAT
        }
        let fd = Glibc.open(path, flags | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw posixError("open", path) }
        return PosixFile(fd: fd, path: path)
    }

    /// Whether `path` exists (`access(2)` with `F_OK`).
    public func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// Atomically replaces `destination` with `source` (`rename(2)`).
    public func rename(_ source: String, to destination: String) throws {
        guard Glibc.rename(source, destination) == 0 else { throw posixError("rename", source) }
    }

    /// Unlinks `path`; a missing file is not an error.
    public func remove(_ path: String) throws {
        guard unlink(path) == 0 || errno == ENOENT else { throw posixError("unlink", path) }
    }

    /// `fsync`s the directory holding `path`, making creations, renames and removals in it durable.
    public func syncDirectory(containing path: String) throws {
        let dir = directoryName(of: path)
        let fd = Glibc.open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw posixError("open directory", dir) }
        defer { Glibc.close(fd) }
        guard fsync(fd) == 0 else { throw posixError("fsync directory", dir) }
    }

    /// Takes an exclusive, non-blocking `flock` on `path` (created if missing); throws
    /// ``StrataError/locked(path:)`` when another holder has a lock on it.
    public func lockExclusive(_ path: String) throws -> any FileLock { try lock(path, LOCK_EX) }
    /// Takes a shared, non-blocking `flock` on `path` (created if missing); throws
    /// ``StrataError/locked(path:)`` when an exclusive lock is held on it.
    public func lockShared(_ path: String) throws -> any FileLock { try lock(path, LOCK_SH) }

    private func lock(_ path: String, _ kind: Int32) throws -> any FileLock {
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw posixError("open lock file", path) }
        if flock(fd, kind | LOCK_NB) != 0 {
            let code = errno
            Glibc.close(fd)
            if code == EWOULDBLOCK { throw StrataError.locked(path: path) }
            throw StrataError.ioFailure(operation: "flock", path: path, errno: code)
        }
        return PosixFileLock(fd: fd)
    }
}

func directoryName(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}

func posixError(_ operation: String, _ path: String) -> StrataError {
    let code = errno
    if code == ENOSPC { return .diskFull(path: path) }
    return .ioFailure(operation: operation, path: path, errno: code)
}

final class PosixFileLock: FileLock, @unchecked Sendable {
    // The descriptor is only closed once; `unlock` and `deinit` race only in misuse.
    private var fd: Int32

    init(fd: Int32) { self.fd = fd }

    func unlock() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }

    deinit { unlock() }
}

/// A file descriptor. Thread-safe because `pread`/`pwrite`/`fdatasync` are.
final class PosixFile: StorageFile, @unchecked Sendable {
    let fd: Int32
    let path: String
    /// Set by the first `close()`: a second one must not close a descriptor number the
    /// process has since reused.
    private let closed = Atomic<Bool>(false)

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw posixError("pread", path)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw posixError("pwrite", path)
            }
            done += n
        }
    }

    func sync() throws {
        guard fdatasync(fd) == 0 else { throw posixError("fdatasync", path) }
    }

    func size() throws -> UInt64 {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw posixError("fstat", path) }
        return UInt64(st.st_size)
    }

    func truncate(to length: UInt64) throws {
        guard ftruncate(fd, off_t(length)) == 0 else { throw posixError("ftruncate", path) }
    }

    func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { Glibc.close(fd) }
    }
}
