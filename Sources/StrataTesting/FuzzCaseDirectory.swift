import StrataStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `body` with a fresh private directory for the files a fuzz case opens through the
/// POSIX layer, then removes the directory and everything in it (a store and its lock file).
/// The directory is on tmpfs (`/dev/shm`) when there is one, so `fsync` costs nothing;
/// otherwise under `$TMPDIR` or `/tmp`. Returns `nil` without calling `body` when no
/// directory can be made.
package func withFuzzCaseDirectory<T>(_ prefix: String, _ body: (String) throws -> T) rethrows -> T? {
    guard let dir = makeFuzzCaseDirectory(prefix) else { return nil }
    defer { removeFuzzCaseDirectory(dir) }
    return try body(dir)
}

/// Writes `bytes` as the whole file at `path` through the engine's POSIX layer, replacing what
/// was there; returns that file system, or `nil` when the file cannot be written. The fuzz
/// targets place each input this way so it reaches the engine through real file I/O.
package func placeRealFile(_ bytes: [UInt8], at path: String) -> PosixFileSystem? {
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

/// A fresh private directory under `$STRATA_FUZZ_CASE_DIR` when that is set (a test that
/// replays inputs which may trap puts the directories a trap leaves behind where it cleans up),
/// else under `/dev/shm` when it is usable, else under `$TMPDIR` or `/tmp`; `nil` when none can
/// be made.
package func makeFuzzCaseDirectory(_ prefix: String) -> String? {
    var bases: [String] = []
    if let base = getenv("STRATA_FUZZ_CASE_DIR") { bases.append(String(cString: base)) }
    if access("/dev/shm", W_OK) == 0 { bases.append("/dev/shm") }
    bases.append(getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp")
    for base in bases {
        var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
        if let path = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) {
            return String(cString: path)
        }
    }
    return nil
}

/// Removes `dir` and everything inside it.
package func removeFuzzCaseDirectory(_ dir: String) {
    if let directory = opendir(dir) {
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name != "." && name != ".." else { continue }
            if entry.pointee.d_type == UInt8(DT_DIR) {
                removeFuzzCaseDirectory(dir + "/" + name)
            } else {
                unlink(dir + "/" + name)
            }
        }
        closedir(directory)
    }
    rmdir(dir)
}
