import StrataStorage
import StrataTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file layer a fuzz case is opened through. Every case goes through both: the simulated
/// file system (no system calls; a read-only open must not write to it) and a real file
/// through the engine's POSIX layer, whose `pread`/`pwrite`/`ftruncate` take the file's own
/// offsets and lengths — an offset the simulated layer shrugs off (it reads nothing past the
/// end) can trap there, as a branch child offset ≥ 2^63 did in `PosixFile.read`.
enum FuzzLayer: CustomStringConvertible {
    case simulated
    /// Real files in `directory` (on tmpfs when there is one: `fsync` costs nothing there).
    case posix(directory: String)

    var description: String {
        switch self {
        case .simulated: return "simulated"
        case .posix: return "POSIX"
        }
    }

    /// A store path in a file system that holds `bytes` there (and nothing else of the case's
    /// past: a previous case's file and lock file are replaced).
    func place(_ bytes: [UInt8],
               name: String) throws -> (fs: any FileSystem, path: String, simulated: SimulatedFileSystem?) {
        switch self {
        case .simulated:
            let fs = SimulatedFileSystem()
            let path = "/fuzz/" + name
            fs.setContents(bytes, of: path)
            return (fs, path, fs)
        case .posix(let directory):
            let fs = PosixFileSystem()
            let path = directory + "/" + name
            try fs.remove(path)
            let file = try fs.open(path, mode: .create)
            defer { file.close() }
            try bytes.withUnsafeBytes { try file.write($0, at: 0) }
            return (fs, path, nil)
        }
    }

    /// A fresh directory for the POSIX layer's case files: under /dev/shm (tmpfs) when it
    /// exists, else under `$TMPDIR`.
    static func makeCaseDirectory(_ prefix: String) throws -> String {
        guard let dir = makeFuzzCaseDirectory(prefix) else {
            throw ToolError("cannot create a directory for fuzz cases")
        }
        return dir
    }
}
