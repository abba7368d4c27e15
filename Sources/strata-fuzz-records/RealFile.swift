import StrataStorage
#if canImport(Glibc)
import Glibc
#endif

/// Writes one line to stderr.
func printToStderr(_ text: String) {
    var bytes = Array(text.utf8)
    bytes.append(UInt8(ascii: "\n"))
    bytes.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
}

/// Writes `bytes` as the whole file at `path` through the engine's POSIX layer; returns that
/// file system, or `nil` when the file cannot be written.
func placeRealFile(_ bytes: [UInt8], at path: String) -> PosixFileSystem? {
    let fs = PosixFileSystem()
    do {
        try fs.remove(path)
        let file = try fs.open(path, mode: .create)
        defer { file.close() }
        try bytes.withUnsafeBytes { try file.write($0, at: 0) }
        return fs
    } catch {
        return nil
    }
}
