import ArgumentParser
import Foundation

/// `strata-bench records-run`: one records workload on one engine, in a process of its own,
/// printing one JSON line. Hidden: `records` runs it.
struct RecordsRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "records-run",
        abstract: "Run one records workload on one engine and print its result as JSON (used by `records`).",
        shouldDisplay: false)

    @Option var engine: RecordsEngineName
    @Option var workload: String
    @Option(help: "Directory this run owns.") var dir: String
    @Option(help: "Directory holding the store bulkinsert left.") var bulkStore: String?
    @Option(help: "The benchmark's sizes, as JSON.") var scale: String

    func run() throws {
        try ChildProcess.respond {
            let scale = try JSONDecoder().decode(RecordsScale.self, from: Data(scale.utf8))
            guard let w = RecordsWorkload(name: workload) else { throw BenchError("unknown workload \(workload)") }
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let bulk = bulkStore.flatMap { $0.isEmpty ? nil : $0 }
            switch engine {
            case .strata, .strataHistory:
                return try RecordsRunner<StrataRecordsEngine>(engineName: engine, scale: scale, directory: dir, bulkStore: bulk).run(w)
            case .sqliteRecount, .sqliteIncremental:
                return try RecordsRunner<SQLiteRecordsEngine>(engineName: engine, scale: scale, directory: dir, bulkStore: bulk).run(w)
            }
        }
    }
}
