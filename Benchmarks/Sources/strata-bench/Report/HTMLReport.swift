import Foundation

/// The benchmark's results as one self-contained HTML page: per section (`kv`, `records`,
/// `objects`) the header lines, a bar chart of the ratios (``BarChart``, inline SVG), the table
/// and the summary. Inline CSS, no scripts, no other files: the page opens anywhere, offline.
struct HTMLReport {
    let sections: [ReportSection]

    /// Text made safe for HTML content and attribute values.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    /// The page's whole style sheet, inline.
    static let style = """
        body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #111827; margin: 24px auto;
               max-width: 1320px; padding: 0 16px; }
        h1 { font-size: 22px; margin: 0 0 4px; }
        h2 { font-size: 18px; margin: 36px 0 4px; border-bottom: 1px solid #e5e7eb; padding-bottom: 4px; }
        .generated, .title { color: #4b5563; }
        ul { margin: 4px 0; padding-left: 20px; color: #374151; }
        figure { margin: 16px 0; }
        figcaption { color: #4b5563; font-size: 13px; }
        svg.chart { width: 100%; height: auto; background: #fff; }
        svg .grid { stroke: #e5e7eb; stroke-width: 1; }
        svg .unit { stroke: #111827; stroke-width: 1.2; stroke-dasharray: 4 3; }
        svg .base { stroke: #6b7280; stroke-width: 1; }
        svg text { font-family: system-ui, sans-serif; fill: #111827; }
        svg .axis { font-size: 12px; fill: #4b5563; }
        svg .legend { font-size: 13px; }
        svg .value { font-size: 10px; fill: #374151; }
        svg .workload { font-size: 13px; font-weight: 600; }
        table { border-collapse: collapse; margin: 12px 0; font-size: 13px; }
        th, td { padding: 3px 8px; border-bottom: 1px solid #e5e7eb; white-space: nowrap; }
        th { text-align: left; background: #f3f4f6; white-space: normal; vertical-align: bottom; }
        td.n { text-align: right; font-variant-numeric: tabular-nums; }
        tr.subject td { font-weight: 600; }
        tr.failed td { color: #b91c1c; }
        tr.first td { border-top: 2px solid #d1d5db; }
        pre { background: #f9fafb; padding: 8px 12px; overflow-x: auto; font-size: 12.5px; }
        """

    /// The page.
    var html: String {
        var out = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>strata-bench results</title>
            <style>
            \(Self.style)
            </style>
            </head>
            <body>
            <h1>strata-bench results</h1>
            <p class="generated">\(Self.escape(Self.machine()))</p>

            """
        for section in sections { out += sectionHTML(section) }
        out += "</body>\n</html>\n"
        return out
    }

    /// Writes the page to `path`, replacing any file there.
    func write(to path: String) throws {
        try Data(html.utf8).write(to: URL(fileURLWithPath: path))
    }

    private func sectionHTML(_ section: ReportSection) -> String {
        let chart = BarChart(section: section)
        let id = section.heading.split(separator: " ").last.map(String.init) ?? "section"
        var out = "<section id=\"\(Self.escape(id))\">\n<h2>\(Self.escape(section.heading))</h2>\n"
        out += "<p class=\"title\">\(Self.escape(section.meta.title))</p>\n"
        out += list(section.meta.configurations)
        out += list(section.meta.notes)
        out += "<figure>\n\(chart.svg())\n<figcaption>Each engine's ops/s ÷ \(Self.escape(chart.reference))'s on the same "
            + "workload (median of paired runs; counted to close where runs timed it), log scale: taller is faster, "
            + "\(Self.escape(chart.reference)) is 1× (the dashed line). The table's “vs” columns are the inverse "
            + "(\(Self.escape(chart.reference)) ÷ engine)."
            + (section.rows.contains { $0.timeWindowSeconds != nil }
                ? " * measured over a time window instead of a fixed count (see the table's note)." : "")
            + "</figcaption>\n</figure>\n"
        out += table(section)
        out += "<p class=\"legend\">\(Self.escape(section.ratioLegend))</p>\n"
        let tail = section.meta.summary + section.meta.checks
            + section.rows.filter { $0.failure != nil }.map { "failed: \($0.workload) \($0.engine): \($0.failure ?? "")" }
        if !tail.isEmpty { out += "<pre>\(Self.escape(tail.joined(separator: "\n")))</pre>\n" }
        return out + "</section>\n"
    }

    private func list(_ items: [String]) -> String {
        items.isEmpty ? "" : "<ul>\n" + items.map { "<li>\(Self.escape($0))</li>\n" }.joined() + "</ul>\n"
    }

    private func table(_ section: ReportSection) -> String {
        let t = ReportTable(section)
        var out = "<table>\n<thead><tr>" + t.header.map { "<th>\(Self.escape($0))</th>" }.joined() + "</tr></thead>\n<tbody>\n"
        var previous: String?
        for (row, cells) in zip(section.rows, t.cells) {
            var classes: [String] = []
            if row.engine == section.meta.subject { classes.append("subject") }
            if row.failed { classes.append("failed") }
            if previous != nil, previous != row.workload { classes.append("first") }
            previous = row.workload
            out += "<tr\(classes.isEmpty ? "" : " class=\"\(classes.joined(separator: " "))\"")>"
            for (col, cell) in cells.enumerated() {
                out += col < t.textColumns ? "<td>\(Self.escape(cell))</td>" : "<td class=\"n\">\(Self.escape(cell))</td>"
            }
            out += "</tr>\n"
        }
        return out + "</tbody>\n</table>\n"
    }

    /// `written 2026-11-24 00:12 UTC on a 2-core machine`: when and where the figures are from.
    private static func machine() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return "written \(formatter.string(from: Date())) UTC on a \(ProcessInfo.processInfo.activeProcessorCount)-core "
            + "machine; the JSON files (--json) hold the same figures"
    }
}
