import Foundation

/// `strata-bench records` as the paired-run driver runs it: its children are `records-run`,
/// given the sizes as JSON; after each workload the engines' stores (or queries) must agree.
struct RecordsBenchmark: PairedBenchmark {
    typealias Details = RecordsRunDetails

    let scale: RecordsScale
    /// `scale` as the children read it.
    private let scaleJSON: String

    init(scale: RecordsScale) throws {
        self.scale = scale
        scaleJSON = String(decoding: try JSONEncoder().encode(scale), as: UTF8.self)
    }

    static var storeWorkload: RecordsWorkload { .bulkInsert }

    func childArguments(_ engine: RecordsEngineName, _ workload: RecordsWorkload, directory: String,
                        store: String) -> [String] {
        ["records-run", "--engine", engine.rawValue, "--workload", workload.name, "--dir", directory,
         "--bulk-store", store, "--scale", scaleJSON]
    }

    /// Engines must agree on what their stores hold (or what the queries found), and each
    /// store must be internally right: every item's copy of its list's name, every search name.
    func disagreements(_ workload: RecordsWorkload,
                       _ runs: [(engine: RecordsEngineName, run: RecordsRunResult)]) -> [String] {
        var problems: [String] = []
        if let first = runs.first {
            for (engine, run) in runs.dropFirst() where run.details.digest != first.run.details.digest {
                problems.append("engines disagree: \(first.engine.rawValue) has \(first.run.details.digest); "
                                + "\(engine.rawValue) has \(run.details.digest)")
            }
        }
        if workload.leavesStore {
            for (engine, run) in runs {
                let d = run.details.digest
                if d.copiesRight != d.items || d.searchNamesRight != d.lists || d.itemCountSum != d.items {
                    problems.append("\(engine.rawValue): derived values wrong: \(d)")
                }
            }
        }
        return problems
    }
}
