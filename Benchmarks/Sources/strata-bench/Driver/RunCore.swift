/// What every run measured, whichever benchmark ran it: the fields the report, the paired
/// ratios and the store checks read. A benchmark's own figures (its digest, its sync counts)
/// travel beside it in ``RunResult/details``.
struct RunCore: Sendable {
    /// The workload's and the engine's names, as the command line and the report spell them.
    var workload: String
    var engine: String
    /// Operations timed (what counts as one is the benchmark's: a put, an item, a query, ...).
    var ops: Int
    var seconds: Double
    /// Latency per transaction (or per batch, per save; the benchmark says), where it sampled one.
    var p50Micros: Double? = nil
    var p99Micros: Double? = nil
    /// What the run left on disk, and how long closing its store took, where it closed one.
    var bytes: Int? = nil
    var closeMillis: Double? = nil
    var peakRSSBytes: Int? = nil
    /// Strata only, for workloads that leave a store: whether its check of the closed store
    /// (reopened read-only, untimed) found it sound, how many problems it reported, and the
    /// first of them.
    var checkClean: Bool? = nil
    var checkProblems: Int? = nil
    var checkMessages: [String]? = nil
    /// Which repeat of the benchmark the run belongs to (1-based), set by the parent: runs of
    /// different engines in the same repeat ran one after the other and form a pair.
    var repeatIndex: Int? = nil

    var opsPerSecond: Double { Double(ops) / seconds }
    /// Operations per second counted until the store was closed, where the run timed its close:
    /// a fill's data is durable and its file complete only then, and engines differ in how much
    /// of their work they leave to close.
    var opsPerSecondToClose: Double? { closeMillis.map { Double(ops) / (seconds + $0 / 1e3) } }
}

extension RunCore {
    /// A run of `ops` operations of `workload` on `engine`, timed by `timing`: its latency
    /// percentiles where it timed more than one call (one call's latency is its whole time),
    /// and the peak RSS now, so a close after the timed part is not in it.
    init(workload: String, engine: String, ops: Int, timing: Timing) {
        self.init(workload: workload, engine: engine, ops: ops, seconds: timing.seconds)
        if timing.calls > 1 {
            p50Micros = timing.micros(at: 0.50)
            p99Micros = timing.micros(at: 0.99)
        }
        peakRSSBytes = Measure.peakRSSBytes()
    }

    /// Closes the run's store with `close`, timing it, and takes the bytes it left in
    /// `directory`; then, untimed, records `check`'s verdict on the closed store (nil: the
    /// engine has no check the benchmark runs).
    mutating func close(_ close: () throws -> Void, leaving directory: String, check: () -> StoreCheck?) throws {
        let start = Measure.now()
        try close()
        closeMillis = Double(Measure.now() - start) / 1e6
        bytes = Measure.directoryBytes(directory)
        // The peak before the check: the check's own memory is not the workload's.
        if peakRSSBytes == nil { peakRSSBytes = Measure.peakRSSBytes() }
        guard let verdict = check() else { return }
        checkClean = verdict.isClean
        checkProblems = verdict.problems.count
        checkMessages = Array(verdict.problems.prefix(maxCheckMessages))
    }
}

/// At most this many problem lines travel from a child to the report.
let maxCheckMessages = 20
