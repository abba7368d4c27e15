import CFileHints
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file descriptor. Thread-safe because `pread`/`pwrite`/`fdatasync` are.
///
/// File positions are `off_t`, signed 64-bit: no file has a byte at 2^63 or beyond. Offsets
/// reach this type from the file itself (a child or overflow offset in a page), so an offset
/// it cannot represent must not trap: a read there finds nothing (as at any position past the
/// end of the file, and a read is cut where positions end), and a write or truncate there
/// throws ``StrataError/invalidArgument(_:)``.
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
        // No byte lies at or beyond 2^63 − 1 (`off_t`'s largest value): read only below it.
        guard offset < FileInteger.maxFileOffset else { return 0 }
        let count = Int(min(UInt64(buffer.count), FileInteger.maxFileOffset - offset))
        let start = Int64(offset)
        var done = 0
        while done < count {
            let rest = UnsafeMutableRawBufferPointer(rebasing: buffer[done..<count])
            let n = pread(fd, rest.baseAddress, rest.count, off_t(start + Int64(done)))
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
        let start = try position(offset, plus: bytes.count, "write")
        var done = 0
        while done < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[done...])
            let n = pwrite(fd, rest.baseAddress, rest.count, off_t(start + Int64(done)))
            if n < 0 {
                if errno == EINTR { continue }
                throw posixError("pwrite", path)
            }
            done += n
        }
    }

    /// `offset` as a file position, when `offset + count` is one too; else `invalidArgument`.
    private func position(_ offset: UInt64, plus count: Int, _ operation: String) throws -> Int64 {
        guard offset <= FileInteger.maxFileOffset, UInt64(count) <= FileInteger.maxFileOffset - offset else {
            throw StrataError.invalidArgument(
                "\(operation) of \(count) bytes at offset \(offset) on \(path): past the largest file offset")
        }
        return Int64(offset)
    }

    func sync() throws {
        guard strata_sync_data(fd) == 0 else { throw posixError("fdatasync", path) }
    }

    func startWriteback(at offset: UInt64, length: UInt64) {
        // A hint: a failure here leaves the work to sync(), which reports any real error.
        _ = strata_start_writeback(fd, offset, length)
    }

    func size() throws -> UInt64 {
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw posixError("fstat", path) }
        return UInt64(max(0, status.st_size))
    }

    var identity: FileIdentity? { fileIdentity(ofDescriptor: fd) }

    func truncate(to length: UInt64) throws {
        let end = try position(length, plus: 0, "truncate")
        guard ftruncate(fd, off_t(end)) == 0 else { throw posixError("ftruncate", path) }
    }

    func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { closeDescriptor(fd) }
    }
}
