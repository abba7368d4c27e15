import Foundation

/// The targets, from the medians: bulk insert against incremental triggers, the growth
/// of the per-insert cost from the smallest to the largest list, indexed fetches.
struct RecordsSummary {
    let rows: [ReportRow<RecordsRunDetails>]
    let scale: RecordsScale
    let engines: [RecordsEngineName]

    /// Adds the summary lines and their figures to `report` (made from `rows`).
    func add(to report: inout Report<RecordsRunDetails>) {
        func ops(_ w: RecordsWorkload, _ e: RecordsEngineName) -> Double? {
            rows.first { $0.workload == w.name && $0.engine == e.rawValue }?.opsPerSecond
        }
        func ratio(_ a: Double?, _ b: Double?) -> Double? { a.flatMap { a in b.map { a / $0 } } }
        func text(_ x: Double?) -> String { x.map { String(format: "%.2f×", $0) } ?? "-" }
        if let small = scale.listSizes.min(), let large = scale.listSizes.max(), small != large {
            var growth: [String: Double?] = [:]
            var parts: [String] = []
            for e in engines {
                // Cost per insert is 1 / (ops/s): the growth is small-list ops/s ÷ large-list ops/s.
                let g = ratio(ops(.insertIntoList(size: small), e), ops(.insertIntoList(size: large), e))
                growth[e.rawValue] = g
                parts.append("\(e.rawValue) \(text(g))")
            }
            report.summaryFigures["insert_cost_growth"] = growth
            report.summary.append("per-insert cost, lists of \(large) ÷ lists of \(small): " + parts.joined(separator: ", ")
                                  + " (target for strata: ≤ 1.5×)")
        }
        // The targets are judged on the table's ratios: medians of paired runs, counted to close.
        func paired(_ w: RecordsWorkload, _ baseline: RecordsEngineName) -> Double? {
            report.rows.first { $0.workload == w.name && $0.engine == RecordsEngineName.strata.rawValue }?
                .ratios?[baseline.rawValue]?.median
        }
        let bulk = paired(.bulkInsert, .sqliteIncremental)
        report.summary.append("bulkinsert, strata ÷ sqlite-incremental: \(text(bulk)) (target ≥ 3×)")
        let fetch = [RecordsEngineName.sqliteIncremental, .sqliteRecount].compactMap { paired(.fetchIndexed, $0) }.min()
        report.summary.append("fetchindexed, strata ÷ sqlite (the slower ratio of the two): \(text(fetch)) (target ≥ 2×)")
    }
}
