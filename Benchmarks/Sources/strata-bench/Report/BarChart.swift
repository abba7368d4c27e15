import Foundation

/// The bar chart of one report section, as inline SVG: for each workload, one bar per engine
/// that ran it, side by side; a bar's height is the engine's ops/s ÷ the subject's (Strata's)
/// ops/s on a log scale, so the subject's bar is 1× and a baseline 4× slower stands at 0.25×.
///
/// Every bar is a `<rect class="bar">` with `data-engine`, `data-workload` and `data-ratio`
/// attributes (a failed row's bar is a grey stub with `data-failed="true"`), so a reader (and
/// the test) can find each engine's bar for each workload.
struct BarChart {
    /// One bar: a row of the section and its ratio to the reference engine.
    struct Bar {
        var workload: String
        var engine: String
        /// ops/s ÷ the reference engine's ops/s; nil when either failed.
        var ratio: Double?
        var opsPerSecond: Double?
        var windowed: Bool
    }

    let section: ReportSection

    /// The engine every bar is divided by: the subject, or the first engine if it did not run.
    var reference: String {
        section.engines.contains(section.meta.subject) ? section.meta.subject : section.engines.first ?? section.meta.subject
    }

    /// The bars, workload by workload, engines in the rows' order within each. A baseline's
    /// ratio is the inverse of the subject's paired ratio to it (the table's "vs" column), so
    /// chart and table show the same figure; rates are counted to close where runs timed it.
    var bars: [Bar] {
        section.workloads.flatMap { w in
            section.engines.compactMap { e -> Bar? in
                guard let row = section.row(w, e) else { return nil }
                let rate = row.headlineOpsPerSecond
                let ratio: Double?
                if rate == nil || rate! <= 0 {
                    ratio = nil
                } else if e == reference {
                    ratio = 1
                } else if reference == section.meta.subject {
                    ratio = section.ratio(w, to: e).map { 1 / $0.median }
                } else {
                    ratio = section.row(w, reference)?.headlineOpsPerSecond.flatMap { $0 > 0 ? rate! / $0 : nil }
                }
                return Bar(workload: w, engine: e, ratio: ratio, opsPerSecond: rate, windowed: row.timeWindowSeconds != nil)
            }
        }
    }

    /// Engine colours, in the order the rows name the engines (the subject first).
    static let palette = ["#2563eb", "#f59e0b", "#10b981", "#ef4444", "#8b5cf6", "#0891b2"]
    /// The SVG's own coordinates (it scales to the page's width): the plot area and the room
    /// for the legend above, the axis labels left and the workload names below.
    static let width = 1200.0
    static let plotTop = 56.0, plotHeight = 300.0, left = 70.0, right = 16.0, labelSpace = 70.0

    /// An engine's bar colour.
    func color(_ engine: String) -> String {
        Self.palette[(section.engines.firstIndex(of: engine) ?? 0) % Self.palette.count]
    }

    /// The decades the axis spans: from below the smallest ratio to above the largest, 1× included.
    func decades(_ bars: [Bar]) -> (low: Int, high: Int) {
        let ratios = bars.compactMap(\.ratio) + [1]
        var low = Int(log10(ratios.min()!).rounded(.down))
        let high = max(Int(log10(ratios.max()!).rounded(.up)), low + 1)
        // A ratio on the axis's floor would be a bar of no height: start a decade lower.
        if ratios.min()! <= pow(10, Double(low)) * 1.05 { low -= 1 }
        return (low, high)
    }

    /// `0.25×`, `12.5×`, `0.0012×`: two or three significant digits.
    static func ratioText(_ r: Double) -> String {
        switch r {
        case 100...: return String(format: "%.0f×", r)
        case 10...: return String(format: "%.1f×", r)
        case 0.1...: return String(format: "%.2f×", r)
        default: return String(format: "%.2g×", r)
        }
    }

    /// `0.01×`, `1×`, `100×`: an axis line's label.
    static func decadeText(_ d: Int) -> String {
        d >= 0 ? "1" + String(repeating: "0", count: d) + "×" : "0." + String(repeating: "0", count: -d - 1) + "1×"
    }

    /// The chart as an `<svg>` element, to be put inline in the page.
    func svg() -> String {
        let bars = bars
        let (low, high) = decades(bars)
        let plotBottom = Self.plotTop + Self.plotHeight
        let plotWidth = Self.width - Self.left - Self.right
        let height = plotBottom + Self.labelSpace
        func y(_ ratio: Double) -> Double {
            plotBottom - (log10(ratio) - Double(low)) / Double(high - low) * Self.plotHeight
        }
        let workloads = section.workloads
        let groupWidth = plotWidth / Double(max(workloads.count, 1))
        let perGroup = max(section.engines.count, 1)
        let barWidth = min(44, groupWidth * 0.8 / Double(perGroup))

        var out = """
            <svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(Int(Self.width)) \(Int(height))" \
            role="img" aria-label="\(HTMLReport.escape(section.heading)): ops/s relative to \(HTMLReport.escape(reference)) per workload">

            """
        // Legend.
        var x = Self.left
        for engine in section.engines {
            let name = engine == reference ? "\(engine) (= 1×)" : engine
            out += "<rect class=\"swatch\" x=\"\(f(x))\" y=\"14\" width=\"14\" height=\"14\" fill=\"\(color(engine))\"/>"
            out += "<text x=\"\(f(x + 20))\" y=\"26\" class=\"legend\">\(HTMLReport.escape(name))</text>\n"
            x += 40 + Double(name.count) * 8
        }
        // Decade grid lines, 1× drawn stronger.
        for d in low...high {
            let gy = y(pow(10, Double(d)))
            out += "<line x1=\"\(f(Self.left))\" x2=\"\(f(Self.width - Self.right))\" y1=\"\(f(gy))\" y2=\"\(f(gy))\" "
                + "class=\"\(d == 0 ? "unit" : "grid")\"/>"
            out += "<text x=\"\(f(Self.left - 8))\" y=\"\(f(gy + 4))\" class=\"axis\" text-anchor=\"end\">"
                + "\(Self.decadeText(d))</text>\n"
        }
        // Bars, grouped by workload.
        for (g, workload) in workloads.enumerated() {
            let group = bars.filter { $0.workload == workload }
            let groupLeft = Self.left + Double(g) * groupWidth
            let firstX = groupLeft + (groupWidth - barWidth * Double(group.count)) / 2
            for (i, bar) in group.enumerated() {
                let bx = firstX + Double(i) * barWidth
                let attributes = "class=\"bar\" data-engine=\"\(HTMLReport.escape(bar.engine))\" "
                    + "data-workload=\"\(HTMLReport.escape(bar.workload))\""
                let rate = bar.opsPerSecond.map(RateFormat.opsPerSecond) ?? "failed"
                if let ratio = bar.ratio {
                    let top = y(ratio)
                    let tip = "\(bar.engine), \(bar.workload): \(rate), \(Self.ratioText(ratio)) \(reference)"
                        + (bar.windowed ? " (time window)" : "")
                    out += "<rect \(attributes) data-ratio=\"\(String(format: "%.6g", ratio))\" x=\"\(f(bx + 1))\" y=\"\(f(top))\" "
                        + "width=\"\(f(barWidth - 2))\" height=\"\(f(plotBottom - top))\" fill=\"\(color(bar.engine))\">"
                        + "<title>\(HTMLReport.escape(tip))</title></rect>"
                    out += "<text x=\"\(f(bx + barWidth / 2))\" y=\"\(f(top - 4))\" class=\"value\" text-anchor=\"middle\">"
                        + "\(Self.ratioText(ratio))\(bar.windowed ? "*" : "")</text>\n"
                } else {
                    // No ratio (this engine or the reference failed): a stub keeps the bar's place.
                    out += "<rect \(attributes) data-failed=\"true\" x=\"\(f(bx + 1))\" y=\"\(f(plotBottom - 3))\" "
                        + "width=\"\(f(barWidth - 2))\" height=\"3\" fill=\"#9ca3af\">"
                        + "<title>\(HTMLReport.escape("\(bar.engine), \(bar.workload): \(rate)"))</title></rect>"
                    out += "<text x=\"\(f(bx + barWidth / 2))\" y=\"\(f(plotBottom - 8))\" class=\"value\" "
                        + "text-anchor=\"middle\">\(bar.opsPerSecond == nil ? "failed" : "-")</text>\n"
                }
            }
            out += "<text x=\"\(f(groupLeft + groupWidth / 2))\" y=\"\(f(plotBottom + 22))\" class=\"workload\" "
                + "text-anchor=\"middle\">\(HTMLReport.escape(workload))</text>\n"
        }
        out += "<line x1=\"\(f(Self.left))\" x2=\"\(f(Self.width - Self.right))\" y1=\"\(f(plotBottom))\" "
            + "y2=\"\(f(plotBottom))\" class=\"base\"/>\n</svg>"
        return out
    }

    private func f(_ v: Double) -> String { String(format: "%.1f", v) }
}
