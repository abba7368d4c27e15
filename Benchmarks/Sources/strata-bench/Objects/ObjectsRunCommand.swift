import ArgumentParser
import Foundation

/// `strata-bench objects-run`: one objects workload on one engine, in a process of its own,
/// printing one JSON line. Hidden: `objects` runs it.
struct ObjectsRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "objects-run",
        abstract: "Run one objects workload on one engine and print its result as JSON (used by `objects`).",
        shouldDisplay: false)

    @Option var engine: ObjectsEngineName
    @Option var workload: String
    @Option(help: "Directory this run owns.") var dir: String
    @Option(help: "Directory holding the store insert left.") var insertStore: String?
    @Option(help: "The benchmark's sizes, as JSON.") var scale: String

    func run() throws {
        try ChildProcess.respond {
            let scale = try JSONDecoder().decode(ObjectsScale.self, from: Data(scale.utf8))
            guard let w = ObjectsWorkload(rawValue: workload) else { throw BenchError("unknown workload \(workload)") }
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let data = ObjectsData(scale: scale)
            let store = insertStore.flatMap { $0.isEmpty ? nil : $0 }
            switch engine {
            case .objects, .objectsNoHistory:
                return try ObjectsRunner<StrataObjectsEngine>(engineName: engine, data: data, directory: dir, insertStore: store).run(w)
            case .records:
                return try ObjectsRunner<RecordLayerObjectsEngine>(engineName: engine, data: data, directory: dir, insertStore: store)
                    .run(w)
            case .grdb:
                return try ObjectsRunner<GRDBObjectsEngine>(engineName: engine, data: data, directory: dir, insertStore: store).run(w)
            case .grdbRows:
                return try ObjectsRunner<GRDBRowsObjectsEngine>(engineName: engine, data: data, directory: dir, insertStore: store).run(w)
            }
        }
    }
}
