import Foundation

/// One workload on one engine, summarised over its repeats: the median of each measurement
/// (peak RSS: the maximum), and how far the runs spread.
struct ReportRow<Details: RunDetails>: Encodable {
    var workload: String
    var engine: String
    var runs: [RunResult<Details>]
    /// Sync syscalls per commit: Strata's own counter, or strace's count for the baselines.
    var fsyncsPerCommit: Double? = nil
    /// Why no run finished, if none did.
    var failure: String?

    /// The subject's ratios to each baseline (set by ``Report`` on the subject's rows only):
    /// counted to close where both runs of a pair timed their close, and without the close.
    var ratios: [String: PairedRatio]? = nil
    var ratiosExcludingClose: [String: PairedRatio]? = nil

    /// The runs' cores, in the order they ran.
    var cores: [RunCore] { runs.map(\.core) }

    var opsPerSecond: Double? { runs.isEmpty ? nil : Measure.median(cores.map(\.opsPerSecond)) }
    /// The median of ``RunCore/opsPerSecondToClose`` over the runs that timed their close.
    var opsPerSecondToClose: Double? { medianOf(\.opsPerSecondToClose) }
    /// (max − min) / median of ops/s.
    var spread: Double? {
        guard let median = opsPerSecond, median > 0 else { return nil }
        let all = cores.map(\.opsPerSecond)
        return (all.max()! - all.min()!) / median
    }
    var p50Micros: Double? { medianOf(\.p50Micros) }
    var p99Micros: Double? { medianOf(\.p99Micros) }
    var bytes: Int? { medianOf { $0.bytes.map(Double.init) }.map { Int($0) } }
    var closeMillis: Double? { medianOf(\.closeMillis) }
    var peakRSSBytes: Int? { cores.compactMap(\.peakRSSBytes).max() }
    /// The time window the runs went on for, if they ran for one instead of a fixed count.
    var timeWindowSeconds: Double? { runs.compactMap(\.timeWindowSeconds).max() }
    /// Whether every checked run left a sound store (nil: no run was checked).
    var checkClean: Bool? {
        let all = cores.compactMap(\.checkClean)
        return all.isEmpty ? nil : !all.contains(false)
    }
    /// Problems found over all checked runs.
    var checkProblems: Int? {
        let all = cores.compactMap(\.checkProblems)
        return all.isEmpty ? nil : all.reduce(0, +)
    }

    private func medianOf(_ field: (RunCore) -> Double?) -> Double? {
        let values = cores.compactMap(field)
        return values.isEmpty ? nil : Measure.median(values)
    }

    enum CodingKeys: String, CodingKey {
        case workload, engine, ops_per_s, ops_per_s_to_close, p50_us, p99_us, bytes, fsyncs_per_commit, peak_rss_bytes,
             spread, close_ms, runs_ops_per_s, runs, ratios, ratios_excl_close, check_clean, check_problems, time_window_s,
             failure
    }

    /// Every field is written, `null` where it does not apply (the synthesised encoder would
    /// omit them instead).
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(workload, forKey: .workload)
        try c.encode(engine, forKey: .engine)
        try c.encode(opsPerSecond, forKey: .ops_per_s)
        try c.encode(opsPerSecondToClose, forKey: .ops_per_s_to_close)
        try c.encode(p50Micros, forKey: .p50_us)
        try c.encode(p99Micros, forKey: .p99_us)
        try c.encode(bytes, forKey: .bytes)
        try c.encode(fsyncsPerCommit, forKey: .fsyncs_per_commit)
        try c.encode(peakRSSBytes, forKey: .peak_rss_bytes)
        try c.encode(spread, forKey: .spread)
        try c.encode(closeMillis, forKey: .close_ms)
        try c.encode(cores.map(\.opsPerSecond), forKey: .runs_ops_per_s)
        try c.encode(runs, forKey: .runs)
        try c.encode(ratios, forKey: .ratios)
        try c.encode(ratiosExcludingClose, forKey: .ratios_excl_close)
        try c.encode(checkClean, forKey: .check_clean)
        try c.encode(checkProblems, forKey: .check_problems)
        try c.encode(timeWindowSeconds, forKey: .time_window_s)
        try c.encode(failure, forKey: .failure)
    }
}

/// One check of a store a Strata run left (including an untimed preparatory run's).
struct StoreCheckOutcome {
    var workload: String
    var repeatIndex: Int
    var prepare: Bool
    var clean: Bool
    var problems: Int
    /// The first problems (at most ``maxCheckMessages``).
    var messages: [String]

    /// The check of the store `run` left in repeat `repeatIndex` (the parent's count: an
    /// untimed preparatory run carries none); `prepare`: it was such a run.
    init(_ run: RunCore, repeatIndex: Int, prepare: Bool) {
        workload = run.workload
        self.repeatIndex = repeatIndex
        self.prepare = prepare
        clean = run.checkClean ?? true
        problems = run.checkProblems ?? 0
        messages = run.checkMessages ?? []
    }
}

/// The report: a configuration header and a table on stdout, and the JSON file. Strata's rows
/// get a ratio column per baseline engine.
struct Report<Details: RunDetails> {
    /// The first line: what ran, on what data.
    let title: String
    /// One line per engine: how it is configured.
    let configurations: [String]
    let notes: [String]
    let rows: [ReportRow<Details>]
    /// The engine whose rows get ratio columns, and the engines it is compared with.
    let subject: String
    let baselines: [String]
    let checks: [StoreCheckOutcome]
    /// Top-level numbers for the JSON file (the data's size, repeats).
    let parameters: [String: Int]
    /// Lines printed after the table (derived figures such as cost growth).
    var summary: [String] = []
    /// Extra top-level JSON objects: name → (engine → figure).
    var summaryFigures: [String: [String: Double?]] = [:]

    /// A report of `rows`, the subject's rows given their paired ratios to each baseline.
    init(title: String, configurations: [String], notes: [String], rows: [ReportRow<Details>], subject: String,
         baselines: [String], checks: [StoreCheckOutcome], parameters: [String: Int]) {
        self.title = title
        self.configurations = configurations
        self.notes = notes
        self.subject = subject
        self.baselines = baselines
        self.checks = checks
        self.parameters = parameters
        self.rows = rows.map { row in
            guard row.engine == subject else { return row }
            var row = row
            var toClose: [String: PairedRatio] = [:], excludingClose: [String: PairedRatio] = [:]
            for baseline in baselines {
                guard let other = rows.first(where: { $0.workload == row.workload && $0.engine == baseline }) else { continue }
                toClose[baseline] = PairedRatio(row.cores, other.cores) { $0.opsPerSecondToClose ?? $0.opsPerSecond }
                let plain = PairedRatio(row.cores, other.cores, \.opsPerSecond)
                if row.cores.contains(where: { $0.closeMillis != nil }) { excludingClose[baseline] = plain }
            }
            row.ratios = toClose
            row.ratiosExcludingClose = excludingClose.isEmpty ? nil : excludingClose
            return row
        }
    }

    /// Everything of the report but its rows, as the JSON file's `report` object holds it.
    var meta: ReportSection.Meta {
        ReportSection.Meta(title: title, configurations: configurations, notes: notes, subject: subject, baselines: baselines,
                           summary: summary, checks: checkLines())
    }

    func printTable() {
        for line in ReportSection(self).textLines { print(line) }
        // Flushed now: a second table's progress lines (stderr) follow, and stdout into a
        // file is buffered until exit.
        fflush(nil)
    }

    /// `strata check: N/N files clean`, or which stores had problems and what they were.
    private func checkLines() -> [String] {
        guard !checks.isEmpty else { return [] }
        let clean = checks.filter(\.clean).count
        var line = "\(subject) check (read-only reopen after close, untimed): \(clean)/\(checks.count) files clean"
        if clean < checks.count { line += ", \(checks.reduce(0) { $0 + $1.problems }) problem(s):" }
        var lines = [line]
        for c in checks where !c.clean {
            let name = (c.prepare ? "(prepare) " : "") + c.workload
            lines.append("  \(name), repeat \(c.repeatIndex): \(c.problems) problem(s)")
            for m in c.messages { lines.append("    " + m) }
            if c.problems > c.messages.count { lines.append("    ... and \(c.problems - c.messages.count) more") }
        }
        return lines
    }

    /// `{"count": …, "repeats": …, <summary figures>, "results": [row, …]}`.
    func writeJSON(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
    }
}

extension Report: Encodable {
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: JSONKey.self)
        for (name, value) in parameters { try c.encode(value, forKey: JSONKey(name)) }
        for (name, figures) in summaryFigures { try c.encode(figures, forKey: JSONKey(name)) }
        try c.encode(meta, forKey: JSONKey("report"))
        try c.encode(rows, forKey: JSONKey("results"))
    }
}
