import ArgumentParser
import Foundation

/// `strata-bench kv-run`: one workload on one engine, in a process of its own, printing one
/// JSON line. Hidden: `kv` runs it, so each run's peak RSS (process-wide) is its own.
struct KVRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kv-run",
        abstract: "Run one workload on one engine and print its result as JSON (used by `kv`).",
        shouldDisplay: false)

    @Option var engine: KVEngineName
    @Option var workload: KVWorkload
    @Option var count: Int = 1_000_000
    @Option(help: "Directory this run owns.") var dir: String
    @Option(help: "Directory holding the store fillrandom left (readrandom, readseq, deleterandom).")
    var filledStore: String?
    @Option var syncCommits: Int = 10_000

    func run() throws {
        try ChildProcess.respond {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let data = KVData(count: count)
            var result: KVRunResult
            switch engine {
            case .strata: result = try runner(StrataEngine.self, data).run(workload)
            case .sqlite: result = try runner(SQLiteEngine.self, data).run(workload)
            case .lmdb: result = try runner(LMDBEngine.self, data).run(workload)
            }
            // Runs that check their store took the peak before the check.
            if result.core.peakRSSBytes == nil { result.core.peakRSSBytes = Measure.peakRSSBytes() }
            return result
        }
    }

    private func runner<E: KVEngine>(_: E.Type, _ data: KVData) -> KVRunner<E> {
        KVRunner<E>(data: data, directory: dir, filledStore: filledStore, syncCommits: syncCommits)
    }
}
