import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

/// `--report FILE.html` and `strata-bench report`: one self-contained page whose bar chart
/// holds exactly one bar per engine per workload, labelled with both, beside the table; and
/// the windowed `sqlite-recount` row says it ran for a time window. Runs the tool at a tiny
/// scale (seconds).
@Suite(.serialized) struct BenchToolReportTests {
    /// The `(engine, workload)` of every bar in the page's charts, in order, parsed from the
    /// inline SVG (well-formed XML, unlike the HTML around it).
    static func bars(inPage html: String) throws -> [(engine: String, workload: String, failed: Bool)] {
        var found: [(String, String, Bool)] = []
        var rest = html[...]
        while let start = rest.range(of: "<svg"), let end = rest.range(of: "</svg>", range: start.upperBound..<rest.endIndex) {
            let collector = BarCollector()
            let parser = XMLParser(data: Data(rest[start.lowerBound..<end.upperBound].utf8))
            parser.delegate = collector
            #expect(parser.parse(), "the chart is not well-formed SVG: \(parser.parserError.map { "\($0)" } ?? "?")")
            found += collector.bars
            rest = rest[end.upperBound...]
        }
        return found
    }

    /// The `(engine, workload)` of every row of a JSON report.
    static func rows(_ json: String) throws -> [(engine: String, workload: String)] {
        try BenchToolTests.results(json).map { ($0["engine"] as? String ?? "?", $0["workload"] as? String ?? "?") }
    }

    static func checkBars(_ bars: [(engine: String, workload: String, failed: Bool)], match rows: [(engine: String, workload: String)]) {
        let barKeys = bars.map { "\($0.workload)/\($0.engine)" }
        let rowKeys = rows.map { "\($0.workload)/\($0.engine)" }
        #expect(Set(barKeys).count == barKeys.count, "a bar appears twice: \(barKeys)")
        #expect(Set(barKeys) == Set(rowKeys), "bars \(barKeys.sorted()) rows \(rowKeys.sorted())")
        #expect(!bars.contains { $0.failed }, "no row failed, so no bar is a failure stub")
    }

    /// Inline CSS and SVG only: nothing the page would fetch.
    static func checkSelfContained(_ html: String) {
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        for outside in ["<script", "<link", "src=", "url(", "@import", "https://"] {
            #expect(!html.contains(outside), "the page refers outside itself: \(outside)")
        }
        #expect(html.replacingOccurrences(of: "xmlns=\"http://www.w3.org/2000/svg\"", with: "").contains("http://") == false)
    }

    @Test func reportChartHasOneBarPerEngineAndWorkload() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bench-report-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }

        // Records, tiny, with sqlite-recount's inserts into lists of 50 on a time window.
        let run = try BenchTool.run([
            "records", "--repeat", "1", "--lists", "20", "--items-per-list", "20", "--list-sizes", "5,50", "--inserts", "400",
            "--setup-items", "500", "--moves", "200", "--renames", "3", "--fanout-lists", "3", "--fanout-items", "100",
            "--queries", "200", "--window-from-list-size", "50", "--recount-window", "0.05",
            "--notes", "300", "--text-queries", "100", "--text-updates", "100",
            "--json", dir + "/records.json", "--report", dir + "/records.html",
        ])
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        let page = try String(contentsOfFile: dir + "/records.html", encoding: .utf8)
        Self.checkSelfContained(page)
        let bars = try Self.bars(inPage: page)
        #expect(bars.count == 13 * 4, "\(bars.map { "\($0.workload)/\($0.engine)" })")
        Self.checkBars(bars, match: try Self.rows(dir + "/records.json"))
        #expect(page.contains("<table>") && page.contains("<td>insert_list50</td><td>sqlite-recount</td>"))

        // The windowed row says so, in the JSON, the text table and the page.
        let windowed = try BenchToolTests.results(dir + "/records.json")
            .first { $0["workload"] as? String == "insert_list50" && $0["engine"] as? String == "sqlite-recount" }
        #expect(windowed?["time_window_s"] as? Double == 0.05)
        let line = run.stdout.split(separator: "\n").first { $0.hasPrefix("insert_list50") && $0.contains("sqlite-recount") }
        #expect(line?.hasSuffix("0.05 s time window") == true, "\(line ?? "no row")")
        #expect(page.contains("0.05 s time window</td>"))

        // A second benchmark, and one page for both from their JSON files.
        let kv = try BenchTool.run(["kv", "--count", "2000", "--repeat", "1", "--sync-commits", "20",
                                               "--json", dir + "/kv.json"])
        #expect(kv.status == 0, "\(kv.stdout)\n\(kv.stderr)")
        let both = try BenchTool.run(["report", dir + "/kv.json", dir + "/records.json", "--output", dir + "/all.html"])
        #expect(both.status == 0, "\(both.stdout)\n\(both.stderr)")
        let all = try String(contentsOfFile: dir + "/all.html", encoding: .utf8)
        Self.checkSelfContained(all)
        #expect(all.components(separatedBy: "<svg").count - 1 == 2, "one chart per benchmark")
        let allBars = try Self.bars(inPage: all)
        #expect(allBars.count == 7 * 3 + 13 * 4)  // kv: 7 workloads (readseq-warm included) × 3, records: 13 × 4
        Self.checkBars(allBars, match: try Self.rows(dir + "/kv.json") + Self.rows(dir + "/records.json"))
        #expect(all.contains("<h2>strata-bench kv</h2>") && all.contains("<h2>strata-bench records</h2>"))
    }
}

/// Collects the `<rect class="bar">` elements of an SVG chart.
private final class BarCollector: NSObject, XMLParserDelegate {
    var bars: [(engine: String, workload: String, failed: Bool)] = []

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        guard name == "rect", attributes["class"] == "bar" else { return }
        bars.append((attributes["data-engine"] ?? "", attributes["data-workload"] ?? "", attributes["data-failed"] == "true"))
    }
}
