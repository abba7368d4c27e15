/// One benchmark (`kv`, `records`, `objects`) as ``PairedRuns`` runs it: what differs between
/// them. The loop itself, the child processes, the pairing and the checks are the driver's.
protocol PairedBenchmark {
    /// The engines by command-line name (`strata`, `sqlite-recount`, `grdb-rows`, ...).
    associatedtype Engine: RawRepresentable<String> & Equatable
    associatedtype Workload: BenchWorkload
    /// The benchmark's own figures of a run, beside the core every run has.
    associatedtype Details: RunDetails

    /// The workload whose store others start from (`fillrandom`, `bulkinsert`, `insert`): run
    /// untimed before the first workload that needs its store, when a selection leaves it out.
    static var storeWorkload: Workload { get }

    /// The command line, after the executable, of the child process that runs `workload` on
    /// `engine` in `directory`, given the directory holding ``storeWorkload``'s store.
    func childArguments(_ engine: Engine, _ workload: Workload, directory: String, store: String) -> [String]

    /// Whether `engine` runs `workload` at all (by default every engine runs every workload).
    func runs(_ workload: Workload, on engine: Engine) -> Bool

    /// Why a later repeat's run contradicts the first repeat's run of the same workload on the
    /// same engine, if it does (by default runs are not compared across repeats).
    func contradiction(_ run: RunResult<Details>, first: RunResult<Details>) -> String?

    /// What is wrong across the engines' runs of `workload` in one repeat, in the order they
    /// ran (by default nothing is compared). Runs cut short by a time window are not among
    /// them: they did less than the others, and checked their stores against what they did.
    func disagreements(_ workload: Workload, _ runs: [(engine: Engine, run: RunResult<Details>)]) -> [String]
}

extension PairedBenchmark {
    func runs(_ workload: Workload, on engine: Engine) -> Bool { true }
    func contradiction(_ run: RunResult<Details>, first: RunResult<Details>) -> String? { nil }
    func disagreements(_ workload: Workload, _ runs: [(engine: Engine, run: RunResult<Details>)]) -> [String] { [] }
}

/// What ``PairedRuns`` needs of a benchmark's workloads.
protocol BenchWorkload: Equatable {
    /// The name on the command line, in the log lines and in the report.
    var name: String { get }
    /// Whether the workload starts from the store ``PairedBenchmark/storeWorkload`` leaves.
    var needsStore: Bool { get }
}
