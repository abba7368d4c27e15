import Foundation

/// One workload on one engine, summarised over its repeats: the median of each measurement
/// (peak RSS: the maximum), and how far the runs spread.
struct ReportRow: Encodable {
    var workload: Workload
    var engine: EngineName
    var runs: [RunResult]
    /// Sync syscalls per commit: Strata's own counter, or strace's count for the baselines.
    var fsyncsPerCommit: Double?
    /// Why no run finished, if none did.
    var failure: String?

    var opsPerSecond: Double? { runs.isEmpty ? nil : Measure.median(runs.map(\.opsPerSecond)) }
    /// (max − min) / median of ops/s.
    var spread: Double? {
        guard let median = opsPerSecond, median > 0 else { return nil }
        let all = runs.map(\.opsPerSecond)
        return (all.max()! - all.min()!) / median
    }
    var p50Micros: Double? { medianOf(\.p50Micros) }
    var p99Micros: Double? { medianOf(\.p99Micros) }
    var bytes: Int? { medianOf { $0.bytes.map(Double.init) }.map { Int($0) } }
    var closeMillis: Double? { medianOf(\.closeMillis) }
    var peakRSSBytes: Int? { runs.compactMap(\.peakRSSBytes).max() }
    /// Whether every checked run left a sound store (nil: no run was checked — not Strata, or
    /// a workload that leaves no store).
    var checkClean: Bool? {
        let all = runs.compactMap(\.checkClean)
        return all.isEmpty ? nil : !all.contains(false)
    }
    /// Problems found over all checked runs.
    var checkProblems: Int? {
        let all = runs.compactMap(\.checkProblems)
        return all.isEmpty ? nil : all.reduce(0, +)
    }

    private func medianOf(_ field: (RunResult) -> Double?) -> Double? {
        let values = runs.compactMap(field)
        return values.isEmpty ? nil : Measure.median(values)
    }

    enum CodingKeys: String, CodingKey {
        case workload, engine, ops_per_s, p50_us, p99_us, bytes, fsyncs_per_commit, peak_rss_bytes, spread,
             close_ms, runs_ops_per_s, check_clean, check_problems
    }

    /// Every field is written, `null` where it does not apply (the synthesised encoder would
    /// omit them instead).
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(workload, forKey: .workload)
        try c.encode(engine, forKey: .engine)
        try c.encode(opsPerSecond, forKey: .ops_per_s)
        try c.encode(p50Micros, forKey: .p50_us)
        try c.encode(p99Micros, forKey: .p99_us)
        try c.encode(bytes, forKey: .bytes)
        try c.encode(fsyncsPerCommit, forKey: .fsyncs_per_commit)
        try c.encode(peakRSSBytes, forKey: .peak_rss_bytes)
        try c.encode(spread, forKey: .spread)
        try c.encode(closeMillis, forKey: .close_ms)
        try c.encode(runs.map(\.opsPerSecond), forKey: .runs_ops_per_s)
        try c.encode(checkClean, forKey: .check_clean)
        try c.encode(checkProblems, forKey: .check_problems)
    }
}

/// One `Store.check()` of a store a Strata run left (including an untimed preparatory fill).
struct StoreCheckOutcome {
    var workload: Workload
    var repeatIndex: Int
    var prepare: Bool
    var clean: Bool
    var problems: Int
    /// The first problems (at most ``RunResult/maxCheckMessages``).
    var messages: [String]
}

/// The report: a configuration header and a table on stdout, and the JSON file.
struct Report {
    let rows: [ReportRow]
    let count: Int
    let repeats: Int
    let engines: [EngineName]
    let notes: [String]
    let checks: [StoreCheckOutcome]

    func printTable() {
        print("strata-bench kv: \(count) keys (16 B) / values (100 B, compressible to ~50%), "
              + "median of \(repeats) run(s), 1,000 ops per transaction, fillsync = single-put commits")
        for engine in engines { print("  " + engine.configuration) }
        for note in notes { print("  note: " + note) }
        print("")
        let header = ["workload", "engine", "ops/s", "spread", "p50 µs", "p99 µs", "bytes", "close ms",
                      "peak RSS", "fsync/commit", "vs sqlite", "vs lmdb", "bytes/sqlite"]
        var table = [header]
        for row in rows {
            let peers = rows.filter { $0.workload == row.workload }
            func peer(_ e: EngineName) -> ReportRow? { peers.first { $0.engine == e } }
            var line = [row.workload.rawValue, row.engine.rawValue]
            if row.failure != nil, row.runs.isEmpty {
                line.append("FAILED")
                table.append(line + Array(repeating: "", count: header.count - line.count))
                continue
            }
            line += [rate(row.opsPerSecond), row.spread.map { String(format: "%.1f%%", $0 * 100) } ?? "-",
                     num(row.p50Micros, "%.1f"), num(row.p99Micros, "%.1f"), mib(row.bytes),
                     num(row.closeMillis, "%.1f"), mib(row.peakRSSBytes), num(row.fsyncsPerCommit, "%.2f")]
            if row.engine == .strata {
                line.append(ratio(row.opsPerSecond, peer(.sqlite)?.opsPerSecond))
                line.append(ratio(row.opsPerSecond, peer(.lmdb)?.opsPerSecond))
                line.append(ratio(row.bytes.map(Double.init), peer(.sqlite)?.bytes.map(Double.init)))
            } else {
                line += ["", "", ""]
            }
            table.append(line)
        }
        let widths = (0..<header.count).map { col in table.map { $0[col].count }.max() ?? 0 }
        for (i, line) in table.enumerated() {
            let cells = line.enumerated().map { col, cell in
                col < 2 ? cell.padding(toLength: widths[col], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[col] - cell.count) + cell
            }
            print(cells.joined(separator: "  "))
            if i == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
        }
        print("ratios: Strata ÷ baseline (ops/s > 1 = Strata faster; bytes < 1 = Strata smaller). "
              + "spread = (max − min) / median of ops/s.")
        printChecks()
        let failed = rows.filter { $0.failure != nil }
        if !failed.isEmpty {
            print("\nfailures (the last error of each; a row with results failed only in some repeats):")
            for row in failed { print("  \(row.workload.rawValue) \(row.engine.rawValue): \(row.failure!)") }
        }
    }

    /// `strata check: N/N files clean`, or which stores had problems and what they were.
    private func printChecks() {
        guard !checks.isEmpty else { return }
        let clean = checks.filter(\.clean).count
        var line = "strata check (read-only reopen after close, untimed): \(clean)/\(checks.count) files clean"
        if clean < checks.count { line += ", \(checks.reduce(0) { $0 + $1.problems }) problem(s):" }
        print(line)
        for c in checks where !c.clean {
            let name = (c.prepare ? "(prepare) " : "") + c.workload.rawValue
            print("  \(name), repeat \(c.repeatIndex): \(c.problems) problem(s)")
            for m in c.messages { print("    " + m) }
            if c.problems > c.messages.count { print("    ... and \(c.problems - c.messages.count) more") }
        }
    }

    func writeJSON(to path: String) throws {
        struct File: Encodable {
            let count: Int
            let repeats: Int
            let results: [ReportRow]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(File(count: count, repeats: repeats, results: rows))
            .write(to: URL(fileURLWithPath: path))
    }

    private func rate(_ v: Double?) -> String {
        guard let v else { return "-" }
        if v >= 1e6 { return String(format: "%.2fM", v / 1e6) }
        if v >= 1e3 { return String(format: "%.1fK", v / 1e3) }
        return String(format: "%.0f", v)
    }

    private func num(_ v: Double?, _ format: String) -> String { v.map { String(format: format, $0) } ?? "-" }

    private func mib(_ v: Int?) -> String { v.map { String(format: "%.1f MiB", Double($0) / 1_048_576) } ?? "-" }

    private func ratio(_ a: Double?, _ b: Double?) -> String {
        guard let a, let b, b > 0 else { return "-" }
        return String(format: "%.2f×", a / b)
    }
}
