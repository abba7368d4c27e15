import Testing
@testable import StrataStorage
#if canImport(Glibc)
import Glibc
#endif

/// The errors an open throws before it reads a byte of the store.
@Suite struct OpenErrorTests {
    /// Regression: a missing file was `ioFailure(errno: 2)`, a case a caller could only match by a
    /// magic number. It is ``StrataError/fileNotFound(path:)``, for a read-only open and for a
    /// writable one that may not create the file, on both file systems.
    @Test func missingFileIsFileNotFound() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let simulated = SimulatedFileSystem()
        for (fs, path) in [(simulated as any FileSystem, "/db/missing.strata"), (PosixFileSystem(), dir.file("missing.strata"))] {
            for readOnly in [true, false] {
                var options = StoreOptions()
                options.fileSystem = fs
                options.readOnly = readOnly
                options.createIfMissing = false
                #expect(throws: StrataError.fileNotFound(path: path), "\(path), \(readOnly ? "read-only" : "read-write")") {
                    _ = try Store(path: path, options: options)
                }
            }
            #expect(!fs.fileExists(path), "a failed open created \(path)")
        }
        #expect(StrataError.fileNotFound(path: "/x/y").description == "no such store file: /x/y")
    }
}
