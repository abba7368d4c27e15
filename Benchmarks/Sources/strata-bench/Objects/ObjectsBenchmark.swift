import Foundation

/// `strata-bench objects` as the paired-run driver runs it: its children are `objects-run`,
/// given the sizes as JSON. The engines must read the same data and leave the same stores,
/// and every repeat must read and leave what the first did.
struct ObjectsBenchmark: PairedBenchmark {
    typealias Details = ObjectsRunDetails

    let scale: ObjectsScale
    /// `scale` as the children read it.
    private let scaleJSON: String

    init(scale: ObjectsScale) throws {
        self.scale = scale
        scaleJSON = String(decoding: try JSONEncoder().encode(scale), as: UTF8.self)
    }

    static var storeWorkload: ObjectsWorkload { .insert }

    func childArguments(_ engine: ObjectsEngineName, _ workload: ObjectsWorkload, directory: String,
                        store: String) -> [String] {
        ["objects-run", "--engine", engine.rawValue, "--workload", workload.rawValue, "--dir", directory,
         "--insert-store", store, "--scale", scaleJSON]
    }

    func runs(_ workload: ObjectsWorkload, on engine: ObjectsEngineName) -> Bool { workload.runs(on: engine) }

    func contradiction(_ run: ObjectsRunResult, first: ObjectsRunResult) -> String? {
        let (now, then) = (run.details, first.details)
        guard now.digest != then.digest || now.store != then.store else { return nil }
        return "repeat \(run.core.repeatIndex ?? 0) read \(now.digest), store \(Self.describe(now.store)); "
            + "repeat 1 read \(then.digest), store \(Self.describe(then.store))"
    }

    /// Engines must read the same objects and leave the same stores; the insert store must hold
    /// every item and list.
    func disagreements(_ workload: ObjectsWorkload,
                       _ runs: [(engine: ObjectsEngineName, run: ObjectsRunResult)]) -> [String] {
        var problems: [String] = []
        guard let (firstEngine, first) = runs.first.map({ ($0.engine.rawValue, $0.run.details) }) else { return [] }
        for (engine, run) in runs.dropFirst() {
            if run.details.digest != first.digest {
                problems.append("engines read different data: \(firstEngine) \(first.digest); "
                                + "\(engine.rawValue) \(run.details.digest)")
            }
            if run.details.store != first.store {
                problems.append("stores differ: \(firstEngine) \(Self.describe(first.store)); "
                                + "\(engine.rawValue) \(Self.describe(run.details.store))")
            }
        }
        if workload == .insert {
            for (engine, run) in runs {
                let store = run.details.store
                if store?.objects != scale.items || store?.lists != scale.lists {
                    problems.append("\(engine.rawValue): the store holds \(store.map(\.description) ?? "nothing")")
                }
            }
        }
        return problems
    }

    /// A store's digest in a message, `-` for a run that left none.
    private static func describe(_ store: ObjectsDigest?) -> String { store.map(\.description) ?? "-" }
}
