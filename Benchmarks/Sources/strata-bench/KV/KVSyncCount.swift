import Foundation

/// Counts the sync syscalls SQLite and LMDB make per commit in fillsync: `strace -f -c` around
/// a `kv-run` of it. A separate, untimed run: tracing slows every sync, so latencies come from
/// the plain run. (Strata counts its own syncs.)
struct KVSyncCount {
    /// `strace`'s path.
    let strace: String
    let benchmark: KVBenchmark

    /// The syscalls that count as a sync. fsync and fdatasync are what the engines use;
    /// msync and sync_file_range are included so an engine that flushes another way is not
    /// silently credited with zero.
    static let syncSyscalls = ["fsync", "fdatasync", "msync", "sync_file_range"]

    /// Runs fillsync on `engine` in `dir` under strace; the sync syscalls per commit, or nil
    /// if it made no commit.
    func syncsPerCommit(_ engine: KVEngineName, dir: String) throws -> Double? {
        let summary = dir + ".strace"
        // strace writes its summary beside the run's directory, which the run creates later.
        try FileManager.default.createDirectory(atPath: (dir as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        let args = ["-f", "-c", "-o", summary, "-e", "trace=" + Self.syncSyscalls.joined(separator: ","),
                    Measure.executablePath()]
            + benchmark.childArguments(engine, .fillsync, directory: dir, store: dir)
        let result = try ChildProcess.launch(strace, args, as: KVRunResult.self,
                                             label: "fillsync \(engine.rawValue) under strace")
        guard let commits = result.details.commits, commits > 0 else { return nil }
        let text = try String(contentsOfFile: summary, encoding: .utf8)
        return Double(Self.parseStraceSummary(text)) / Double(commits)
    }

    /// Sums the `calls` column of the sync syscalls in an `strace -c` summary:
    /// `% time  seconds  usecs/call  calls  [errors]  syscall`.
    static func parseStraceSummary(_ text: String) -> Int {
        var total = 0
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 5, let name = fields.last, syncSyscalls.contains(String(name)),
                  let calls = Int(fields[3]) else { continue }
            total += calls
        }
        return total
    }
}
