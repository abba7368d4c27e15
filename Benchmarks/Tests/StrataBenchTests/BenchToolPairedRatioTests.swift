import Foundation
import Testing
@testable import strata_bench

/// The report's ratios (decision 39): the median of per-repeat ratios of alternating runs with
/// their range, counted to close where runs timed their close, and every run kept in the JSON.
@Suite struct BenchToolPairedRatioTests {
    /// A kv run of `engine` in repeat `rep`: `ops` in `seconds`, closed in `closeMillis`.
    static func run(_ engine: String, _ rep: Int?, ops: Int = 1_000, seconds: Double, closeMillis: Double? = nil) -> KVRunResult {
        KVRunResult(core: RunCore(workload: "fillseq", engine: engine, ops: ops, seconds: seconds, closeMillis: closeMillis,
                                  repeatIndex: rep),
                    details: KVRunDetails(checksum: 0))
    }

    @Test func ratiosPairRunsOfTheSameRepeat() throws {
        // Per repeat Strata is 2×, 3×, 4× as fast; repeat 2 ran on a slower machine for both.
        // The ratio of the medians (2,000 ÷ 1,000 ops/s) would say 2×; the paired median is 3×.
        let strata = [Self.run("strata", 1, seconds: 0.5), Self.run("strata", 2, seconds: 2.0), Self.run("strata", 3, seconds: 0.25)]
            .map(\.core)
        let sqlite = [Self.run("sqlite", 1, seconds: 1.0), Self.run("sqlite", 2, seconds: 6.0), Self.run("sqlite", 3, seconds: 1.0)]
            .map(\.core)
        let paired = try #require(PairedRatio(strata, sqlite, \.opsPerSecond))
        #expect(paired == PairedRatio(median: 3, low: 2, high: 4, pairs: 3))
        #expect(paired.text == "3.00× (2.00–4.00)")
        // Runs in a different order, and a repeat where one engine failed, pair the same way.
        let partial = try #require(PairedRatio(Array(strata.reversed()), [sqlite[2], sqlite[0]], \.opsPerSecond))
        #expect(partial == PairedRatio(median: 3, low: 2, high: 4, pairs: 2))
        #expect(PairedRatio(strata, [Self.run("sqlite", 4, seconds: 1).core], \.opsPerSecond) == nil, "no common repeat, no ratio")
        #expect(PairedRatio([Self.run("strata", 1, seconds: 1).core], [], \.opsPerSecond) == nil)
        #expect(PairedRatio([Self.run("strata", 1, seconds: 1).core], [Self.run("sqlite", 1, seconds: 1).core], \.opsPerSecond)?
                    .text == "1.00×")
    }

    @Test func headlineRatiosCountTheClose() throws {
        // Strata fills twice as fast but closes slowly; counted to close it is 0.8× as fast.
        let strata = [Self.run("strata", 1, seconds: 0.5, closeMillis: 750)]
        let sqlite = [Self.run("sqlite", 1, seconds: 1.0, closeMillis: 0)]
        let report = Report(title: "t: x", configurations: [], notes: [],
                            rows: [ReportRow(workload: "fillseq", engine: "strata", runs: strata),
                                   ReportRow(workload: "fillseq", engine: "sqlite", runs: sqlite)],
                            subject: "strata", baselines: ["sqlite"], checks: [], parameters: [:])
        let row = try #require(report.rows.first)
        #expect(row.ratios?["sqlite"]?.median == 0.8)
        #expect(row.ratiosExcludingClose?["sqlite"]?.median == 2)
        #expect(report.rows[1].ratios == nil, "only the subject's rows carry ratios")

        // The section (what the table, the chart and `strata-bench report` read) leads with it.
        let section = ReportSection(report)
        #expect(section.ratio("fillseq", to: "sqlite")?.median == 0.8)
        #expect(section.ratio("fillseq", to: "sqlite", excludingClose: true)?.median == 2)
        let table = ReportTable(section)
        let cells = try #require(table.cells.first)
        #expect(cells[table.header.firstIndex(of: "vs sqlite")!] == "0.80×")
        #expect(cells[table.header.firstIndex(of: "vs sqlite excl. close")!] == "2.00×")
        #expect(cells[table.header.firstIndex(of: "ops/s to close")!] == "800")
        let bar = try #require(BarChart(section: section).bars.first { $0.engine == "sqlite" })
        #expect(abs(bar.ratio! - 1.25) < 1e-12, "the chart shows the inverse of the table's ratio")

        // The JSON keeps every run, with its repeat, and reads back into the same section.
        let json = try JSONEncoder().encode(report)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let results = try #require(object["results"] as? [[String: Any]])
        let runs = try #require(results.first?["runs"] as? [[String: Any]])
        #expect(runs.count == 1 && runs.first?["repeat"] as? Int == 1 && runs.first?["closeMillis"] as? Double == 750)
        let decoded = try JSONDecoder().decode(ReportSection.self, from: json)
        #expect(decoded.ratio("fillseq", to: "sqlite") == section.ratio("fillseq", to: "sqlite"))
    }

    /// A JSON file written before pairs were kept still gives ratios: those of the medians.
    @Test func filesWithoutPairsFallBackToMedians() throws {
        let old = """
            {"report": {"title": "strata-bench kv: old", "configurations": [], "notes": [], "subject": "strata",
                        "baselines": ["sqlite"], "summary": [], "checks": []},
             "results": [{"workload": "fillseq", "engine": "strata", "ops_per_s": 300},
                         {"workload": "fillseq", "engine": "sqlite", "ops_per_s": 100}]}
            """
        let section = try JSONDecoder().decode(ReportSection.self, from: Data(old.utf8))
        #expect(section.ratio("fillseq", to: "sqlite") == PairedRatio(median: 3, low: 3, high: 3, pairs: 1))
        #expect(section.ratio("fillseq", to: "sqlite", excludingClose: true) == nil)
    }
}
