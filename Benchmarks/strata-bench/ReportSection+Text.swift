extension ReportSection {
    /// What `strata-bench` prints on stdout at the end: the header, the table in columns,
    /// what the ratios mean, the summary, the checks and the failures.
    var textLines: [String] {
        var lines = [meta.title]
        lines += meta.configurations.map { "  " + $0 }
        lines += meta.notes.map { "  note: " + $0 }
        lines.append("")
        lines += ReportTable(self).textLines
        lines.append(ratioLegend)
        lines += meta.summary
        lines += meta.checks
        let failed = rows.filter { $0.failure != nil }
        if !failed.isEmpty {
            lines.append("")
            lines.append("failures (the last error of each; a row with results failed only in some repeats):")
            lines += failed.map { "  \($0.workload) \($0.engine): \($0.failure ?? "")" }
        }
        return lines
    }

    /// What the table's ratio columns mean.
    var ratioLegend: String {
        let s = meta.subject
        return "ratios: \(s) ÷ baseline (ops/s > 1 = \(s) faster; bytes < 1 = \(s) smaller). "
            + "spread = (max − min) / median of ops/s."
    }
}
