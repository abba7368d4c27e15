#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
