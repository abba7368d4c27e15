import Foundation

/// The loop `kv`, `records` and `objects` share: every repeat, every selected workload, every
/// selected engine, each run in a child process of its own (so each run's memory and peak RSS
/// are its own and one engine's caches cannot help another).
///
/// Within a workload the engines run one after the other, and the one that goes first rotates
/// each repeat, so slow drift of the machine (page cache, thermal state, other load) favours
/// none of them, and runs of one repeat form the pairs of the report's ratios
/// (``PairedRatio``). A run that fails, engines that disagree, a store that does not check
/// clean: each is noted and the loop goes on, so the report shows everything that ran.
struct PairedRuns<Benchmark: PairedBenchmark> {
    typealias Run = RunResult<Benchmark.Details>

    let benchmark: Benchmark
    let engines: [Benchmark.Engine]
    /// In the order they run: a workload that needs a store after the one that leaves it.
    let workloads: [Benchmark.Workload]
    let repeats: Int
    /// The pass's work directory: repeat N's stores go in `rep<N>/<engine>/<workload>`.
    let root: String
    /// Whether the work files stay (else each repeat's go when it ends).
    let keep: Bool
    /// What sets this pass apart in its log lines (` (1000000 items)`), or nothing.
    var tag = ""

    /// What a pass gave.
    struct Outcome {
        /// One row per workload and engine that runs it (workloads, then engines, in the
        /// selected order), with its runs and why a run of it failed, if one did.
        var rows: [ReportRow<Benchmark.Details>]
        /// Every store check, the untimed preparatory runs' included.
        var checks: [StoreCheckOutcome]
        /// Whether a run failed, engines disagreed, or a store did not check clean.
        var failed: Bool
    }

    func run() -> Outcome {
        var runs: [String: [Run]] = [:]
        var failures: [String: String] = [:]
        var checks: [StoreCheckOutcome] = []
        func key(_ workload: Benchmark.Workload, _ engine: Benchmark.Engine) -> String {
            "\(workload.name)/\(engine.rawValue)"
        }
        func noteCheck(_ run: Run, repeatIndex: Int, prepare: Bool) {
            guard run.core.checkClean != nil else { return }
            checks.append(StoreCheckOutcome(run.core, repeatIndex: repeatIndex, prepare: prepare))
        }

        for rep in 1...repeats {
            let prefix = "[\(rep)/\(repeats)]\(tag)"
            let repDir = root + "/rep\(rep)"
            let order = (0..<engines.count).map { engines[($0 + rep - 1) % engines.count] }
            var storeReady = workloads.contains(Benchmark.storeWorkload)
            for workload in workloads {
                if workload.needsStore && !storeReady {
                    prepareStores(order, repDir: repDir, prefix: prefix) {
                        noteCheck($0, repeatIndex: rep, prepare: true)
                    }
                    storeReady = true
                }
                var compared: [(engine: Benchmark.Engine, run: Run)] = []
                for engine in order where benchmark.runs(workload, on: engine) {
                    let engineDir = "\(repDir)/\(engine.rawValue)"
                    do {
                        var run = try launch(engine, workload, directory: "\(engineDir)/\(workload.name)",
                                             store: "\(engineDir)/\(Benchmark.storeWorkload.name)",
                                             label: "\(prefix) \(workload.name) \(engine.rawValue)")
                        run.core.repeatIndex = rep
                        if let first = runs[key(workload, engine)]?.first,
                           let problem = benchmark.contradiction(run, first: first) {
                            throw BenchError(problem)
                        }
                        runs[key(workload, engine), default: []].append(run)
                        noteCheck(run, repeatIndex: rep, prepare: false)
                        if run.timeWindowSeconds == nil { compared.append((engine, run)) }
                        log(run.progressLine(workload: workload.name + tag, repeatIndex: rep, repeats: repeats))
                    } catch {
                        failures[key(workload, engine)] = "\(error)"
                        log("\(prefix) \(workload.name) \(engine.rawValue) FAILED: \(error)")
                    }
                }
                for problem in benchmark.disagreements(workload, compared) {
                    failures[key(workload, compared[0].engine)] = problem
                    log("\(prefix) \(workload.name): \(problem)")
                }
            }
            if !keep { try? FileManager.default.removeItem(atPath: repDir) }
        }

        var rows: [ReportRow<Benchmark.Details>] = []
        for workload in workloads {
            for engine in engines where benchmark.runs(workload, on: engine) {
                let name = key(workload, engine)
                rows.append(ReportRow(workload: workload.name, engine: engine.rawValue, runs: runs[name] ?? [],
                                      failure: failures[name]))
            }
        }
        return Outcome(rows: rows, checks: checks, failed: !failures.isEmpty || checks.contains { !$0.clean })
    }

    /// Untimed: the store workload on every engine, for the workloads that start from its
    /// store when the selection left it out. Its runs count only for their store checks.
    private func prepareStores(_ order: [Benchmark.Engine], repDir: String, prefix: String, _ checked: (Run) -> Void) {
        let workload = Benchmark.storeWorkload
        for engine in order where benchmark.runs(workload, on: engine) {
            let label = "\(prefix) (prepare) \(workload.name) \(engine.rawValue)"
            log(label)
            do {
                checked(try launch(engine, workload, directory: "\(repDir)/\(engine.rawValue)/\(workload.name)",
                                   store: "", label: label))
            } catch {
                log("\(label) FAILED: \(error)")
            }
        }
    }

    /// One run in a child process: this executable again, with the benchmark's arguments.
    private func launch(_ engine: Benchmark.Engine, _ workload: Benchmark.Workload, directory: String, store: String,
                        label: String) throws -> Run {
        try ChildProcess.launch(Measure.executablePath(),
                                benchmark.childArguments(engine, workload, directory: directory, store: store),
                                as: Run.self, label: label)
    }
}
