import Foundation

/// Runs `kv-run` children: the same executable, re-executed, so every workload's memory and
/// peak RSS are its own and one engine's caches cannot help or hurt another's.
struct ChildProcess {
    let executable: String
    let count: Int
    let syncCommits: Int
    /// `strace`, if installed: used to count the syncs SQLite and LMDB make in fillsync.
    let strace: String?

    /// The syscalls that count as a sync. fsync and fdatasync are what the engines use;
    /// msync and sync_file_range are included so an engine that flushes another way is not
    /// silently credited with zero.
    static let syncSyscalls = ["fsync", "fdatasync", "msync", "sync_file_range"]

    private func arguments(_ engine: EngineName, _ workload: Workload, dir: String, filledStore: String) -> [String] {
        ["kv-run", "--engine", engine.rawValue, "--workload", workload.rawValue, "--count", String(count),
         "--dir", dir, "--filled-store", filledStore, "--sync-commits", String(syncCommits)]
    }

    /// Runs one workload and returns its result; the child's stderr is passed on to ours, and
    /// `label` names the run in the heartbeat's lines.
    func run(_ engine: EngineName, _ workload: Workload, dir: String, filledStore: String, label: String) throws -> RunResult {
        try Self.launch(executable, arguments(engine, workload, dir: dir, filledStore: filledStore), as: RunResult.self,
                        label: label)
    }

    /// Runs fillsync under `strace -f -c` and returns the sync syscalls per commit, counted.
    /// A separate, untimed run: tracing slows every sync, so latencies come from the plain run.
    func countSyncsPerCommit(_ engine: EngineName, dir: String) throws -> Double? {
        guard let strace else { return nil }
        let summary = dir + ".strace"
        let args = ["-f", "-c", "-o", summary, "-e", "trace=" + Self.syncSyscalls.joined(separator: ","), executable]
            + arguments(engine, .fillsync, dir: dir, filledStore: dir)
        let result = try Self.launch(strace, args, as: RunResult.self, label: "fillsync \(engine.rawValue) under strace")
        guard let commits = result.commits, commits > 0 else { return nil }
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

    /// Runs `path args`, and decodes the last line of its stdout that parses as `R`; a child
    /// that fails prints a ``ChildFailure`` line instead, which becomes the error.
    ///
    /// The child's stderr (its progress lines) is passed on to ours as it comes; when neither
    /// has said anything for ``Heartbeat/silence`` seconds, a line says that `label` is still
    /// running, so a long untimed phase (a setup, a store check) is not taken for a hang.
    static func launch<R: Decodable>(_ path: String, _ args: [String], as: R.Type, label: String? = nil) throws -> R {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = args
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let heartbeat = Heartbeat(label: label ?? args.prefix(5).joined(separator: " "))
        try process.run()
        let forwarded = heartbeat.forward(err.fileHandleForReading)
        heartbeat.start()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        heartbeat.stop()
        // Every line the child wrote is on our stderr before its result is reported.
        forwarded.wait()
        let lines = output.split(separator: UInt8(ascii: "\n")).reversed()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            if let failure = lines.lazy.compactMap({ try? JSONDecoder().decode(ChildFailure.self, from: Data($0)) }).first {
                throw BenchError(failure.error)
            }
            throw BenchError("child `\(args.joined(separator: " "))` failed (status \(process.terminationStatus))")
        }
        // The result is the last line that parses; anything an engine prints before it is ignored.
        for line in lines {
            if let result = try? JSONDecoder().decode(R.self, from: Data(line)) { return result }
        }
        throw BenchError("child `\(args.joined(separator: " "))` printed no result")
    }
}
