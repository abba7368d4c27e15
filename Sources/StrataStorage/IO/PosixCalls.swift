#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The C library's calls that the file types' own methods shadow (`open`, `close`, `read`,
// `rename`), named once here at file scope, where the names mean the C functions on Linux and
// on Apple platforms alike (a `Glibc.` prefix would not compile on the latter).

/// `open(2)` with a creation mode.
func openDescriptor(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }

/// `open(2)` of an existing file.
func openDescriptor(_ path: String, _ flags: Int32) -> Int32 { open(path, flags) }

/// `close(2)`; its result is ignored by every caller (a descriptor is gone either way).
@discardableResult
func closeDescriptor(_ descriptor: Int32) -> Int32 { close(descriptor) }

/// `read(2)`.
func readDescriptor(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// `rename(2)`.
func renameFile(_ source: String, _ destination: String) -> Int32 { rename(source, destination) }

/// `stat(2)`'s device and inode of the file at `path`, `nil` when there is none.
func fileIdentity(atPath path: String) -> FileIdentity? {
    var status = stat()
    guard stat(path, &status) == 0 else { return nil }
    return FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
}

/// `fstat(2)`'s device and inode of an open descriptor, `nil` when it fails.
func fileIdentity(ofDescriptor descriptor: Int32) -> FileIdentity? {
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { return nil }
    return FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
}
