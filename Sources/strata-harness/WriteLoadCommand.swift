import ArgumentParser
import StrataStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `strata-harness write-load FILE --stop-file PATH [--durability full|normal]` (hidden):
/// commits a fixed, deterministic workload in a loop until PATH exists, so that read-only opens
/// in another process can race a live writer (the live-reader test). Tree "load", commit
/// n = 1, 2, …:
///
/// - puts `seq` → n as 8 bytes big-endian;
/// - puts `k` + (n mod 200, three digits) → n mod 90 + 1 bytes, byte i = (n + i) mod 256;
/// - when n mod 10 = 0, puts `big` → 3,000 bytes of n mod 256 (an overflow value);
/// - when n mod 7 = 0, deletes `k` + ((n + 100) mod 200, three digits).
///
/// Checkpoints run every `--checkpoint-bytes` of log. Prints `write-load: N commits` at the end.
struct WriteLoadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write-load", abstract: "Writer process for the live-reader test.", shouldDisplay: false)

    @Argument(help: "The store file (created if missing).")
    var file: String

    @Option(help: "Stop when this file exists.")
    var stopFile: String

    @Option(help: "full or normal.")
    var durability = "full"

    @Option(help: "Checkpoint after this many bytes of log.")
    var checkpointBytes = 16 << 10

    @Option(help: "Stop after this many seconds even without the stop file.")
    var maxSeconds = 120

    func validate() throws {
        guard durability == "full" || durability == "normal" else {
            throw ValidationError("--durability must be full or normal")
        }
    }

    func run() throws {
        var options = StoreOptions(durability: durability == "full" ? .full : .normal)
        options.checkpointLogBytes = checkpointBytes
        options.compactOnCloseGarbageRatio = 1
        let store = try Store(path: file, options: options)
        let deadline = ContinuousClock.now + .seconds(maxSeconds)
        var commits: UInt64 = 0
        while access(stopFile, F_OK) != 0 && ContinuousClock.now < deadline {
            commits += 1
            let commit = commits
            try store.write { tx in
                let tree = try tx.treeCreatingIfMissing("load")
                try tree.put(Array("seq".utf8), withUnsafeBytes(of: commit.bigEndian) { Array($0) })
                try tree.put(WriteLoadCommand.key(commit % 200),
                             (0..<(commit % 90 + 1)).map { UInt8(truncatingIfNeeded: commit &+ $0) })
                if commit % 10 == 0 {
                    try tree.put(Array("big".utf8), [UInt8](repeating: UInt8(truncatingIfNeeded: commit), count: 3000))
                }
                if commit % 7 == 0 { _ = try tree.delete(WriteLoadCommand.key((commit + 100) % 200)) }
            }
            // Normal durability commits take microseconds: leave the reader some of the CPU.
            if durability == "normal" { usleep(50) }
        }
        try store.close()
        print("write-load: \(commits) commits")
    }

    static func key(_ number: UInt64) -> [UInt8] {
        let digits = String(number)
        return Array(("k" + String(repeating: "0", count: max(0, 3 - digits.count)) + digits).utf8)
    }
}
