import Foundation

/// The issue's targets, from the medians: the object layer within 2× the record layer's time
/// on every workload and at least 3× faster than GRDB; at most 128 bytes per registered fault;
/// and each engine's peak RSS.
struct ObjectsSummary {
    let rows: [ReportRow<ObjectsRunResult>]
    let engines: [ObjectsEngineName]

    static let maxTimeVersusRecords = 2.0
    static let minSpeedupVersusGRDB = 3.0
    static let maxBytesPerFault = 128.0

    private func seconds(_ w: ObjectsWorkload, _ e: ObjectsEngineName) -> Double? {
        // Time per object from the median rate, so runs of different sizes compare.
        rows.first { $0.workload == w.rawValue && $0.engine == e.rawValue }?.opsPerSecond.map { 1 / $0 }
    }

    private func text(_ x: Double?) -> String { x.map { String(format: "%.2f×", $0) } ?? "-" }

    func add(to report: inout Report<ObjectsRunResult>) {
        var versusRecords: [String: Double?] = [:]
        var versusGRDB: [String: Double?] = [:]
        var lines: [String] = []
        var missed: [String] = []
        for w in ObjectsWorkload.allCases where !w.isObjectsOnly && rows.contains(where: { $0.workload == w.rawValue }) {
            var parts: [String] = []
            guard let objects = seconds(w, .objects) else { continue }
            if engines.contains(.records) {
                let r = seconds(w, .records).map { objects / $0 }
                versusRecords[w.rawValue] = r
                let met = r.map { $0 <= Self.maxTimeVersusRecords }
                parts.append("objects time ÷ records time \(text(r)) (\(met.map { $0 ? "met" : "MISSED" } ?? "-"))")
                if met == false { missed.append("\(w.rawValue) vs records") }
            }
            if engines.contains(.grdb) {
                let g = seconds(w, .grdb).map { $0 / objects }
                versusGRDB[w.rawValue] = g
                let met = g.map { $0 >= Self.minSpeedupVersusGRDB }
                parts.append("grdb time ÷ objects time \(text(g)) (\(met.map { $0 ? "met" : "MISSED" } ?? "-"))")
                if met == false { missed.append("\(w.rawValue) vs grdb") }
            }
            lines.append("  \(w.rawValue): " + parts.joined(separator: "; "))
        }
        report.summary.append("targets (objects ≤ \(text(Self.maxTimeVersusRecords)) records' time; ≥ "
                              + "\(text(Self.minSpeedupVersusGRDB)) faster than grdb), from the median rates:")
        report.summary += lines
        report.summaryFigures["time_objects_over_records"] = versusRecords
        report.summaryFigures["speedup_objects_over_grdb"] = versusGRDB

        if let f = rows.first(where: { $0.workload == ObjectsWorkload.faults.rawValue }), !f.runs.isEmpty {
            let figures = f.runs.compactMap(\.faults)
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
            let figures = o.runs.compactMap(\.observation)
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
