import Foundation

/// The results table of one section, as cells: what the text report prints in columns and the
/// HTML page puts in a `<table>`, so both show the same figures.
struct ReportTable {
    let header: [String]
    let cells: [[String]]
    /// Columns whose cells are words (left-aligned); the rest are figures.
    let textColumns = 2

    init(_ section: ReportSection) {
        let rows = section.rows
        let subject = section.meta.subject
        let baselines = section.meta.baselines
        let withSyncs = rows.contains { $0.fsyncsPerCommit != nil }
        let withWindows = rows.contains { $0.timeWindowSeconds != nil }
        let withClose = rows.contains { $0.opsPerSecondToClose != nil }
        var header = ["workload", "engine"]
        if withClose { header.append("ops/s to close") }
        header += ["ops/s", "spread", "p50 µs", "p99 µs", "bytes", "close ms", "peak RSS"]
        if withSyncs { header.append("fsync/commit") }
        header += baselines.map { "vs \($0)" }
        if withClose { header += baselines.map { "vs \($0) excl. close" } }
        if let first = baselines.first { header.append("bytes/\(first)") }
        if withWindows { header.append("note") }
        var cells: [[String]] = []
        for row in rows {
            var line = [row.workload, row.engine]
            if row.failed {
                line.append("FAILED")
                cells.append(line + Array(repeating: "", count: header.count - line.count))
                continue
            }
            if withClose { line.append(row.opsPerSecondToClose.map(RateFormat.compact) ?? "-") }
            line += [row.opsPerSecond.map(RateFormat.compact) ?? "-", row.spread.map { String(format: "%.1f%%", $0 * 100) } ?? "-",
                     Self.number(row.p50Micros, "%.1f"), Self.number(row.p99Micros, "%.1f"), Self.mebibytes(row.bytes),
                     Self.number(row.closeMillis, "%.1f"), Self.mebibytes(row.peakRSSBytes)]
            if withSyncs { line.append(Self.number(row.fsyncsPerCommit, "%.2f")) }
            if row.engine == subject {
                line += baselines.map { section.ratio(row.workload, to: $0)?.text ?? "-" }
                if withClose { line += baselines.map { section.ratio(row.workload, to: $0, excludingClose: true)?.text ?? "-" } }
                if let first = baselines.first {
                    line.append(Self.ratio(row.bytes.map(Double.init), section.row(row.workload, first)?.bytes.map(Double.init)))
                }
            } else {
                line += Array(repeating: "", count: baselines.count * (withClose ? 2 : 1) + (baselines.isEmpty ? 0 : 1))
            }
            if withWindows { line.append(row.timeWindowSeconds.map { "\(RateFormat.duration($0)) time window" } ?? "") }
            cells.append(line)
        }
        self.header = header
        self.cells = cells
    }

    /// The table in aligned columns, a rule under the header.
    var textLines: [String] { Self.aligned(header, cells, textColumns: textColumns) }

    /// `header` and `cells` in aligned columns, a rule under the header: the first
    /// `textColumns` columns left-aligned (words), the rest right-aligned (figures).
    static func aligned(_ header: [String], _ cells: [[String]], textColumns: Int) -> [String] {
        let all = [header] + cells
        let widths = header.indices.map { col in all.map { $0[col].count }.max() ?? 0 }
        var lines: [String] = []
        for (i, line) in all.enumerated() {
            let padded = line.enumerated().map { col, cell in
                col < textColumns ? cell.padding(toLength: widths[col], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[col] - cell.count) + cell
            }
            lines.append(padded.joined(separator: "  "))
            if i == 0 { lines.append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
        }
        return lines
    }

    static func number(_ v: Double?, _ format: String) -> String { v.map { String(format: format, $0) } ?? "-" }

    static func mebibytes(_ v: Int?) -> String { v.map { String(format: "%.1f MiB", Double($0) / 1_048_576) } ?? "-" }

    static func ratio(_ a: Double?, _ b: Double?) -> String {
        guard let a, let b, b > 0 else { return "-" }
        return String(format: "%.2f×", a / b)
    }
}
