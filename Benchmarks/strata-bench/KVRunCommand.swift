import ArgumentParser
import Foundation

/// The engines the benchmark knows, by command-line name.
enum EngineName: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    case strata, sqlite, lmdb

    var configuration: String {
        switch self {
        case .strata: return StrataEngine.configuration
        case .sqlite: return SQLiteEngine.configuration
        case .lmdb: return LMDBEngine.configuration
        }
    }
}

extension Workload: ExpressibleByArgument {}

/// `strata-bench kv-run`: one workload on one engine, in a process of its own, printing one
/// JSON line. Hidden: `kv` runs it, so each run's peak RSS (process-wide) is its own.
struct KVRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kv-run",
        abstract: "Run one workload on one engine and print its result as JSON (used by `kv`).",
        shouldDisplay: false)

    @Option var engine: EngineName
    @Option var workload: Workload
    @Option var count: Int = 1_000_000
    @Option(help: "Directory this run owns.") var dir: String
    @Option(help: "Directory holding the store fillrandom left (readrandom, readseq, deleterandom).")
    var filledStore: String?
    @Option var syncCommits: Int = 10_000

    func run() throws {
        var result: RunResult
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let data = KVData(count: count)
            switch engine {
            case .strata: result = try runner(StrataEngine.self, data).run(workload)
            case .sqlite: result = try runner(SQLiteEngine.self, data).run(workload)
            case .lmdb: result = try runner(LMDBEngine.self, data).run(workload)
            }
        } catch {
            // The parent reads stdout only: tell it why, in the same one-line JSON channel.
            let line = try JSONEncoder().encode(ChildFailure(error: "\(error)"))
            FileHandle.standardOutput.write(line + Data("\n".utf8))
            throw ExitCode(1)
        }
        // Runs that check their store took the peak before the check.
        if result.peakRSSBytes == nil { result.peakRSSBytes = Measure.peakRSSBytes() }
        let line = try JSONEncoder().encode(result)
        FileHandle.standardOutput.write(line + Data("\n".utf8))
    }

    private func runner<E: KVEngine>(_: E.Type, _ data: KVData) -> WorkloadRunner<E> {
        WorkloadRunner<E>(data: data, directory: dir, filledStore: filledStore, syncCommits: syncCommits)
    }
}

/// What a failed child prints instead of a ``RunResult``.
struct ChildFailure: Codable {
    var error: String
}
