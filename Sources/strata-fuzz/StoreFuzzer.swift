import StrataStorage
import StrataTesting

// The storage libFuzzer target: an arbitrary byte string is opened as a store file (read-only,
// then read-write; on the simulated file system, then as a real file through the POSIX layer,
// whose `pread` takes the file's own offsets) and read in full. A finding is a trap, a
// sanitizer report, a hang, a runaway allocation, an error that is not a `StrataError`, or data
// that breaks the store's own invariants (key order, forward = backward, `get` agrees with the
// scan, `count` agrees with the scan) while `check()` calls the file clean.
//
// Build and run (docs/reliability.md):
//   swift build -c release --sanitize=fuzzer --sanitize=address --product strata-fuzz
//   SWIFT_BACKTRACE=enable=no .build/release/strata-fuzz -max_total_time=3600 CORPUS/
// Without `--sanitize=fuzzer` the weak `main` in CFuzzDriver links instead and replays files.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = [UInt8](UnsafeBufferPointer(start: data, count: size))
    for readOnly in [true, false] {
        let fs = SimulatedFileSystem()
        fs.setContents(bytes, of: "/fuzz/store.strata")
        examine(fs, "/fuzz/store.strata", readOnly: readOnly)
    }
    withFuzzCaseDirectory("strata-fuzz") { dir in
        for readOnly in [true, false] {
            let path = dir + "/store.strata"
            guard let fs = placeRealFile(bytes, at: path) else { return }
            examine(fs, path, readOnly: readOnly)
        }
    }
    return 0
}

private func options(_ fs: any FileSystem, readOnly: Bool) -> StoreOptions {
    var options = StoreOptions(durability: .normal)
    options.fileSystem = fs
    options.readOnly = readOnly
    options.cacheBytes = 1 << 20
    options.syncIntervalMilliseconds = 3_600_000
    options.compactOnCloseGarbageRatio = 1
    return options
}

private func examine(_ fs: any FileSystem, _ path: String, readOnly: Bool) {
    do {
        let store = try Store(path: path, options: options(fs, readOnly: readOnly))
        let violation = try store.read { try readEverything($0) }
        if let violation {
            // Only `check()` may vouch for the data; a clean report over broken data is a finding.
            let report = try store.check()
            if report.isClean { fatalError("check() is clean but a full read found: \(violation)") }
        }
        if !readOnly {
            let key: [UInt8] = Array("fuzz-probe".utf8)
            try store.write { tx in try tx.treeCreatingIfMissing("zz-fuzz").put(key, key) }
            guard try store.read({ try $0.tree("zz-fuzz")?.get(key) }) == key else {
                fatalError("a write after recovery cannot be read back")
            }
        }
        try? store.close()
    } catch is StrataError {
        return
    } catch {
        fatalError("an error that is not a StrataError: \(error)")
    }
}
