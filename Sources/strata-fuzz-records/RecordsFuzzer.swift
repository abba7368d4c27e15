import StrataRecords
import StrataStorage
import StrataTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The record-layer libFuzzer target. An input is a record store's content as trees
// (`RecordsImage`'s byte format: the stored model text, rows, index, unique, inverse, join and
// extremes keys); the storage engine writes it into a store file — so every checksum is valid
// and libFuzzer's mutations reach the record layer's decoders, not a checksum — in page images,
// commit records or both (the first byte). The store then opens with the model stored in it,
// read-only and read-write, on the simulated file system and as a real file through the POSIX
// layer, and once more read-write with the TodoList model (an application opening its own store,
// which must notice a store that is not what its model expects); `RecordsFuzzCheck` reads every
// object, fetches through every index and compares with a scan, walks every relationship both
// ways, runs `checkRecords()` and commits a transaction. A finding is a trap, a sanitizer
// report, a hang, a runaway allocation, an error that is not a `StrataError`, or inconsistent
// answers from a store `checkRecords()` calls sound.
//
// Build and run (seed corpus from `strata-harness fuzz --write-records-corpus DIR`):
//   swift build -c release --sanitize=fuzzer --sanitize=address --product strata-fuzz-records \
//     --scratch-path .build-fuzz
//   SWIFT_BACKTRACE=enable=no .build-fuzz/release/strata-fuzz-records -max_total_time=3600 -timeout=10 \
//     -rss_limit_mb=2048 -malloc_limit_mb=1024 -detect_leaks=0 DIR
// Without `--sanitize=fuzzer` the weak `main` in CFuzzDriver links instead and replays files.
// (The target has two files: a lone file in an executable target would be compiled as a
// script, with a `main` of its own that hides CFuzzDriver's.)

private let todo = try? todoModel()
/// `STRATA_FUZZ_VERBOSE=1`: each open's outcome on stderr (for replaying one input).
private let verbose = getenv("STRATA_FUZZ_VERBOSE") != nil

private func report(_ label: String, _ outcome: RecordsFuzzOutcome) {
    if verbose { printToStderr("\(label): \(outcome)") }
    if outcome.isFailure { fatalError("\(label): \(outcome)") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecordsOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let image = RecordsImage(bytes: [UInt8](UnsafeBufferPointer(start: data, count: size)))
    let bytes: [UInt8]
    do {
        bytes = try image.storeBytes()
    } catch {
        fatalError("the storage engine failed to write the image's trees: \(error)")
    }
    for readOnly in [true, false] {
        let fs = SimulatedFileSystem()
        fs.setContents(bytes, of: RecordsImage.path)
        var options = RecordsImage.options(fs)
        options.readOnly = readOnly
        let before = fs.mutationCount
        let outcome = RecordsFuzzCheck.examine(path: RecordsImage.path, options: options, model: nil)
        report("\(readOnly ? "read-only" : "read-write"), simulated", outcome)
        if readOnly && fs.mutationCount != before { fatalError("a read-only open wrote to the file system") }
    }
    if let model = todo {
        let fs = SimulatedFileSystem()
        fs.setContents(bytes, of: RecordsImage.path)
        let outcome = RecordsFuzzCheck.examine(path: RecordsImage.path, options: RecordsImage.options(fs),
                                               model: model)
        report("read-write with the TodoList model, simulated", outcome)
    }
    withFuzzCaseDirectory("strata-fuzz-records") { dir in
        let path = dir + "/records.strata"
        for readOnly in [true, false] {
            guard let fs = placeRealFile(bytes, at: path) else { return }
            var options = RecordsImage.options(fs)
            options.readOnly = readOnly
            let outcome = RecordsFuzzCheck.examine(path: path, options: options, model: nil)
            report("\(readOnly ? "read-only" : "read-write"), POSIX", outcome)
        }
    }
    return 0
}
