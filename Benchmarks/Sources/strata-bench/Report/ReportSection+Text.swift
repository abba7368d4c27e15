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
        var text = "vs <baseline>: \(s) ÷ baseline in ops/s (> 1 = \(s) faster), the median over the repeats of the ratio "
            + "of two runs from the same repeat (the engines alternate), the range of those ratios in brackets. "
        if rows.contains(where: { $0.opsPerSecondToClose != nil }) {
            text += "Where a run timed its store's close (workloads that write), the ratio counts ops ÷ (time + close): "
                + "the data is durable and the file complete only then; \"excl. close\" leaves the close out. "
        }
        return text + "bytes/<baseline> < 1 = \(s) smaller. spread = (max − min) / median of ops/s."
    }
}
