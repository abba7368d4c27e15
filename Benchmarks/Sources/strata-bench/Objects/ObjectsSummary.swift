import Foundation

/// The targets, from the medians: the object layer's time at most 1.5× the record layer's on every
/// workload, at least as fast as GRDB at its best and 3× as fast as GRDB through `Codable`, the
/// record layer 1.5× as fast as GRDB at its best; at most 128 bytes per registered fault; and each
/// engine's peak RSS. "GRDB at its best" is the faster of `grdb` and `grdb-rows` on each workload
/// (whichever ran), so a workload where the `Codable` path happens to win is not measured against
/// the slower one.
struct ObjectsSummary {
    let rows: [ReportRow<ObjectsRunDetails>]
    let engines: [ObjectsEngineName]

    static let maxTimeVersusRecords = 1.5
    static let minSpeedupVersusGRDB = 3.0
    static let minSpeedupVersusFastestGRDB = 1.0
    static let minRecordsSpeedupVersusFastestGRDB = 1.5

    static let maxBytesPerFault = 128.0

    private func seconds(_ w: ObjectsWorkload, _ e: ObjectsEngineName) -> Double? {
        // Time per object from the median rate, so runs of different sizes compare.
        rows.first { $0.workload == w.rawValue && $0.engine == e.rawValue }?.opsPerSecond.map { 1 / $0 }
    }

    /// The GRDB engine with the shorter time per object on `w`, and that time.
    private func fastestGRDB(_ w: ObjectsWorkload) -> (engine: ObjectsEngineName, seconds: Double)? {
        ObjectsEngineName.grdbEngines.filter(engines.contains)
            .compactMap { e in seconds(w, e).map { (engine: e, seconds: $0) } }
            .min { $0.seconds < $1.seconds }
    }

    private func text(_ x: Double?) -> String { x.map { String(format: "%.2f×", $0) } ?? "-" }

    func add(to report: inout Report<ObjectsRunDetails>) {
        var versusRecords: [String: Double?] = [:]
        var versusGRDB: [String: Double?] = [:]
        var versusGRDBRows: [String: Double?] = [:]
        var versusFastest: [String: Double?] = [:]
        var recordsVersusFastest: [String: Double?] = [:]
        var lines: [String] = []
        var missed: [String] = []
        /// `label ratio (met)`, noting a miss as `name`.
        func target(_ label: String, _ ratio: Double?, _ met: (Double) -> Bool, _ name: String) -> String {
            let ok = ratio.map(met)
            if ok == false { missed.append(name) }
            return "\(label) \(text(ratio)) (\(ok.map { $0 ? "met" : "MISSED" } ?? "-"))"
        }
        for w in ObjectsWorkload.allCases where !w.isObjectsOnly && rows.contains(where: { $0.workload == w.rawValue }) {
            var parts: [String] = []
            let objects = seconds(w, .objects)
            let records = seconds(w, .records)
            let fastest = fastestGRDB(w)
            if let objects, let records {
                let r = objects / records
                versusRecords[w.rawValue] = r
                parts.append(target("objects time ÷ records time", r, { $0 <= Self.maxTimeVersusRecords }, "\(w.rawValue) objects vs records"))
            }
            if let objects, let fastest {
                let g = fastest.seconds / objects
                versusFastest[w.rawValue] = g
                parts.append(target("objects ÷ fastest GRDB (\(fastest.engine.rawValue))", g, { $0 >= Self.minSpeedupVersusFastestGRDB },
                                    "\(w.rawValue) objects vs \(fastest.engine.rawValue)"))
            }
            if let objects, let grdb = seconds(w, .grdb) {
                let g = grdb / objects
                versusGRDB[w.rawValue] = g
                parts.append(target("objects ÷ grdb", g, { $0 >= Self.minSpeedupVersusGRDB }, "\(w.rawValue) objects vs grdb"))
            }
            if let objects, let grdbRows = seconds(w, .grdbRows) { versusGRDBRows[w.rawValue] = grdbRows / objects }
            if let objects, let withoutHistory = seconds(w, .objectsNoHistory) {
                parts.append("objects time ÷ objects-nohistory time \(text(objects / withoutHistory)) (what history costs)")
            }
            if let records, let fastest {
                let g = fastest.seconds / records
                recordsVersusFastest[w.rawValue] = g
                parts.append(target("records ÷ fastest GRDB (\(fastest.engine.rawValue))", g,
                                    { $0 >= Self.minRecordsSpeedupVersusFastestGRDB }, "\(w.rawValue) records vs \(fastest.engine.rawValue)"))
            }
            lines.append("  \(w.rawValue): " + parts.joined(separator: "; "))
        }
        report.summary.append("targets, from the median rates without the close (ratios of ops/s, > 1 = the first faster; the time ratio ≤ 1 = objects "
                              + "faster): objects' time ≤ \(text(Self.maxTimeVersusRecords)) records'; objects ≥ "
                              + "\(text(Self.minSpeedupVersusFastestGRDB)) the fastest GRDB and ≥ \(text(Self.minSpeedupVersusGRDB)) grdb "
                              + "(Codable); records ≥ \(text(Self.minRecordsSpeedupVersusFastestGRDB)) the fastest GRDB. The fastest "
                              + "GRDB is the faster of grdb and grdb-rows on each workload (GRDB at its best), named in brackets:")
        report.summary += lines
        report.summaryFigures["time_objects_over_records"] = versusRecords
        report.summaryFigures["speedup_objects_over_grdb"] = versusGRDB
        report.summaryFigures["speedup_objects_over_grdb_rows"] = versusGRDBRows
        report.summaryFigures["speedup_objects_over_fastest_grdb"] = versusFastest
        report.summaryFigures["speedup_records_over_fastest_grdb"] = recordsVersusFastest

        if let f = rows.first(where: { $0.workload == ObjectsWorkload.faults.rawValue }), !f.runs.isEmpty {
            let figures = f.runs.compactMap(\.details.faults)
            let rss = Measure.median(figures.map { Double($0.rssDeltaBytes) / Double($0.count) })
            let heap = Measure.median(figures.map { Double($0.mallocDeltaBytes) / Double($0.count) })
            let met = rss <= Self.maxBytesPerFault
            if !met { missed.append("bytes per fault") }
            report.summary.append(String(format: "bytes per registered fault (%d faults held): %.1f B of RSS, %.1f B malloc'd "
                                         + "(target ≤ %.0f B: %@)", figures.first?.count ?? 0, rss, heap, Self.maxBytesPerFault,
                                         met ? "met" : "MISSED"))
            report.summaryFigures["bytes_per_fault"] = ["rss": rss, "malloc": heap]
        }

        if let o = rows.first(where: { $0.workload == ObjectsWorkload.observe.rawValue }), !o.runs.isEmpty {
            let figures = o.runs.compactMap(\.details.observation)
            let delivery = Measure.median(figures.map { $0.deliverySeconds * 1e3 })
            let save = Measure.median(figures.map { $0.saveSeconds * 1e3 })
            let f = figures.first
            report.summary.append(String(format: "observe: %d of %d observed objects changed by another context's save (%.2f ms): "
                                         + "merged and every observer told in %.2f ms; observers told %d (each once: %@), "
                                         + "of unchanged objects %d", f?.changed ?? 0, f?.observers ?? 0, save, delivery,
                                         f?.fired ?? 0, (f?.firedOnce ?? false) ? "yes" : "NO", f?.firedOutsideChanged ?? 0))
            report.summaryFigures["observe"] = ["delivery_ms": delivery, "save_ms": save]
        }

        var peaks: [String: Double?] = [:]
        var parts: [String] = []
        for e in engines {
            let peak = rows.filter { $0.engine == e.rawValue && $0.workload != ObjectsWorkload.faults.rawValue }
                .compactMap(\.peakRSSBytes).max()
            peaks[e.rawValue] = peak.map(Double.init)
            parts.append("\(e.rawValue) " + (peak.map { String(format: "%.1f MiB", Double($0) / 1_048_576) } ?? "-"))
        }
        report.summary.append("peak RSS per engine (largest over its workloads, faults excluded): " + parts.joined(separator: ", "))
        report.summaryFigures["peak_rss_bytes"] = peaks
        report.summary.append(missed.isEmpty ? "every target met" : "targets missed: " + missed.joined(separator: ", "))
    }
}
