#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The real file system: `pread`/`pwrite`/`fdatasync`/`flock`.
public struct PosixFileSystem: FileSystem {
    /// The real file system of this process.
    public init() {}

    /// Opens `path` with `open(2)` in `mode`; a created file gets permissions 0644. Throws
    /// ``StrataError/fileNotFound(path:)`` when `path` does not exist (and `mode` is not
    /// `.create`), ``StrataError/ioFailure(operation:path:errno:)`` for any other failure.
    public func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
        let flags: Int32
        switch mode {
        case .readOnly: flags = O_RDONLY
        case .readWrite: flags = O_RDWR
        case .create: flags = O_RDWR | O_CREAT
        }
        let fd = openDescriptor(path, flags | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            if errno == ENOENT && mode != .create { throw StrataError.fileNotFound(path: path) }
            throw posixError("open", path)
        }
        return PosixFile(fd: fd, path: path)
    }

    /// Whether `path` exists (`access(2)` with `F_OK`).
    public func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// The device and inode of the file at `path` (`stat(2)`), `nil` when there is none.
    public func identity(of path: String) -> FileIdentity? { fileIdentity(atPath: path) }

    /// Atomically replaces `destination` with `source` (`rename(2)`).
    public func rename(_ source: String, to destination: String) throws {
        guard renameFile(source, destination) == 0 else { throw posixError("rename", source) }
    }

    /// Unlinks `path`; a missing file is not an error.
    public func remove(_ path: String) throws {
        guard unlink(path) == 0 || errno == ENOENT else { throw posixError("unlink", path) }
    }

    /// `fsync`s the directory holding `path`, making creations, renames and removals in it durable.
    public func syncDirectory(containing path: String) throws {
        let dir = directoryName(of: path)
        let fd = openDescriptor(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw posixError("open directory", dir) }
        defer { closeDescriptor(fd) }
        guard fsync(fd) == 0 else { throw posixError("fsync directory", dir) }
    }

    /// Takes an exclusive, non-blocking `flock` on `path` (created if missing); throws
    /// ``StrataError/locked(path:)`` when another holder has a lock on it.
    public func lockExclusive(_ path: String) throws -> any FileLock { try lock(path, LOCK_EX) }
    /// Takes a shared, non-blocking `flock` on `path` (created if missing); throws
    /// ``StrataError/locked(path:)`` when an exclusive lock is held on it.
    public func lockShared(_ path: String) throws -> any FileLock { try lock(path, LOCK_SH) }

    /// Reads `/proc/locks` (Linux): an exclusive `flock` on the file's device and inode is an
    /// exclusive lock, and the line names the process that took it. Without `/proc/locks`, or
    /// when the file cannot be examined, ``FileLockState/unknown``.
    public func lockState(_ path: String) -> FileLockState {
        var status = stat()
        guard stat(path, &status) == 0 else { return access(path, F_OK) == 0 ? .unknown : .unlocked }
        guard let table = readSmallFile("/proc/locks") else { return .unknown }
        let dev = UInt64(status.st_dev)
        // glibc's gnu_dev_major/minor; /proc/locks prints "major:minor:inode", the first two in hex.
        let major = ((dev >> 8) & 0xFFF) | ((dev >> 32) & ~UInt64(0xFFF))
        let minor = (dev & 0xFF) | ((dev >> 12) & ~UInt64(0xFF))
        let inode = UInt64(status.st_ino)
        for line in table.split(separator: "\n") {
            // "1: FLOCK  ADVISORY  WRITE 4242 fe:00:1234567 0 EOF"; blocked waiters read "1: -> FLOCK …".
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", fields[3] == "WRITE" else { continue }
            let id = fields[5].split(separator: ":")
            guard id.count == 3, UInt64(id[0], radix: 16) == major, UInt64(id[1], radix: 16) == minor,
                  UInt64(id[2]) == inode else { continue }
            return .lockedExclusively(pid: Int32(fields[4]).flatMap { $0 > 0 ? $0 : nil })
        }
        return .unlocked
    }

    private func lock(_ path: String, _ kind: Int32) throws -> any FileLock {
        let fd = openDescriptor(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw posixError("open lock file", path) }
        if flock(fd, kind | LOCK_NB) != 0 {
            let code = errno
            closeDescriptor(fd)
            if code == EWOULDBLOCK { throw StrataError.locked(path: path) }
            throw StrataError.ioFailure(operation: "flock", path: path, errno: code)
        }
        return PosixFileLock(fd: fd)
    }
}

/// The whole content of a small file (a `/proc` table), or `nil`.
private func readSmallFile(_ path: String) -> String? {
    let fd = openDescriptor(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { closeDescriptor(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while bytes.count < 16 << 20 {
        let n = chunk.withUnsafeMutableBytes { readDescriptor(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        guard n >= 0 else { return nil }
        if n == 0 { break }
        bytes += chunk[..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
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

/// A `flock` held on an open descriptor (``PosixFileSystem/lockExclusive(_:)``,
/// ``PosixFileSystem/lockShared(_:)``); unlocking closes the descriptor.
final class PosixFileLock: FileLock, @unchecked Sendable {
    // The descriptor is only closed once; `unlock` and `deinit` race only in misuse.
    private var fd: Int32

    init(fd: Int32) { self.fd = fd }

    func unlock() {
        if fd >= 0 { closeDescriptor(fd); fd = -1 }
    }

    deinit { unlock() }
}
