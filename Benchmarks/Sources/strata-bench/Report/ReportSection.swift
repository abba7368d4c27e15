import Foundation

/// One benchmark's results as the text table and the HTML page show them: the header lines,
/// one row per workload and engine (medians), the summary lines. It is what the JSON file
/// holds (`report` and `results`), so `strata-bench report` draws a page from earlier runs'
/// files exactly as `--report` draws it from a run.
struct ReportSection: Codable, Sendable {
    /// Everything but the rows; the JSON file's `report` object.
    struct Meta: Codable, Sendable {
        /// The first line: what ran, on what data (`strata-bench kv: …`).
        var title: String
        /// One line per engine: how it is configured.
        var configurations: [String]
        var notes: [String]
        /// The engine the others are compared with, and those others.
        var subject: String
        var baselines: [String]
        /// Derived figures and targets, one line each.
        var summary: [String]
        /// The store checks: a count line, then the problems of unclean stores.
        var checks: [String]
    }

    /// One workload on one engine; the JSON file's `results` entry (medians over the repeats).
    struct Row: Codable, Sendable {
        var workload: String
        var engine: String
        var opsPerSecond: Double?
        /// Counted until the store was closed, for runs that timed their close (fills, deletes).
        var opsPerSecondToClose: Double?
        var spread: Double?
        var p50Micros: Double?
        var p99Micros: Double?
        var bytes: Int?
        var closeMillis: Double?
        var peakRSSBytes: Int?
        var fsyncsPerCommit: Double?
        /// The time window the runs went on for, when they ran for one instead of a fixed count.
        var timeWindowSeconds: Double?
        /// Why no run (or some run) failed; a row without figures failed in every repeat.
        var failure: String?
        /// The subject's rows: its ratio to each baseline, the median of paired runs' ratios,
        /// counted to close where the runs timed their close (the headline) ...
        var ratios: [String: PairedRatio]?
        /// ... and without the close (only where the runs timed one).
        var ratiosExcludingClose: [String: PairedRatio]?

        enum CodingKeys: String, CodingKey {
            case workload, engine, spread, bytes, failure, ratios
            case opsPerSecond = "ops_per_s", opsPerSecondToClose = "ops_per_s_to_close", ratiosExcludingClose = "ratios_excl_close"
            case p50Micros = "p50_us", p99Micros = "p99_us", closeMillis = "close_ms"
            case peakRSSBytes = "peak_rss_bytes", fsyncsPerCommit = "fsyncs_per_commit", timeWindowSeconds = "time_window_s"
        }

        /// Whether the row has no figures: every run of it failed.
        var failed: Bool { opsPerSecond == nil }

        /// The rate the ratios lead with: counted to close where the runs timed their close.
        var headlineOpsPerSecond: Double? { opsPerSecondToClose ?? opsPerSecond }
    }

    var meta: Meta
    var rows: [Row]

    enum CodingKeys: String, CodingKey {
        case meta = "report", rows = "results"
    }

    /// `strata-bench kv`: the title up to its colon.
    var heading: String { meta.title.split(separator: ":", maxSplits: 1).first.map(String.init) ?? meta.title }

    /// The engines in the order the rows first name them.
    var engines: [String] {
        var seen: [String] = []
        for row in rows where !seen.contains(row.engine) { seen.append(row.engine) }
        return seen
    }

    /// The workloads in the order the rows first name them.
    var workloads: [String] {
        var seen: [String] = []
        for row in rows where !seen.contains(row.workload) { seen.append(row.workload) }
        return seen
    }

    /// The row of `engine` on `workload`, if it ran.
    func row(_ workload: String, _ engine: String) -> Row? {
        rows.first { $0.workload == workload && $0.engine == engine }
    }

    /// The subject's ratio to `baseline` on `workload`: the paired median the report computed
    /// (`excludingClose`: the one that leaves the close out, nil where no close was timed), or
    /// for a file written before pairs were kept, the ratio of the two medians.
    func ratio(_ workload: String, to baseline: String, excludingClose: Bool = false) -> PairedRatio? {
        guard let row = row(workload, meta.subject) else { return nil }
        if let ratios = row.ratios { return excludingClose ? row.ratiosExcludingClose?[baseline] : ratios[baseline] }
        // A file from before pairs were kept: the ratio of the medians, with no close counted.
        guard !excludingClose, let a = row.opsPerSecond, let b = self.row(workload, baseline)?.opsPerSecond, a > 0, b > 0
        else { return nil }
        return PairedRatio(median: a / b, low: a / b, high: a / b, pairs: 1)
    }

    /// A section read from a JSON file a subcommand wrote with `--json`.
    init(jsonFile path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        do { self = try JSONDecoder().decode(ReportSection.self, from: data) } catch {
            throw BenchError("\(path): not a strata-bench JSON report with a `report` object (\(error))")
        }
    }

    init(meta: Meta, rows: [Row]) {
        self.meta = meta
        self.rows = rows
    }

    /// The section of a report just made.
    init<Details>(_ report: Report<Details>) {
        meta = report.meta
        rows = report.rows.map(Row.init)
    }
}

extension ReportSection.Row {
    init<Details>(_ row: ReportRow<Details>) {
        self.init(workload: row.workload, engine: row.engine, opsPerSecond: row.opsPerSecond,
                  opsPerSecondToClose: row.opsPerSecondToClose, spread: row.spread,
                  p50Micros: row.p50Micros, p99Micros: row.p99Micros, bytes: row.bytes, closeMillis: row.closeMillis,
                  peakRSSBytes: row.peakRSSBytes, fsyncsPerCommit: row.fsyncsPerCommit,
                  timeWindowSeconds: row.timeWindowSeconds, failure: row.failure, ratios: row.ratios,
                  ratiosExcludingClose: row.ratiosExcludingClose)
    }
}
