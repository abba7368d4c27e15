import Foundation

extension ObjectsCommand {
    /// The first pass's report as JSON plus `digests`: workload → engine → what its first run
    /// read and what its store held after (hex checksums, counts), so a reader can see the
    /// engines agree. A second pass (the growth workloads at more items) goes under `growth`,
    /// in the same form.
    static func writeJSON(_ passes: [Report<ObjectsRunDetails>], to path: String) throws {
        guard let first = passes.first else { return }
        var top = try jsonObject(first)
        if passes.count > 1 { top["growth"] = try jsonObject(passes[1]) }
        try JSONSerialization.data(withJSONObject: top, options: [.prettyPrinted, .sortedKeys])
            .write(to: URL(fileURLWithPath: path))
    }

    /// One pass's report as a JSON object, with its `digests`.
    private static func jsonObject(_ report: Report<ObjectsRunDetails>) throws -> [String: Any] {
        guard var object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(report)) as? [String: Any] else {
            throw BenchError("the report did not encode as an object")
        }
        func describe(_ d: ObjectsDigest) -> [String: Any] {
            ["objects": d.objects, "lists": d.lists, "checksum": String(d.checksum, radix: 16)]
        }
        var digests: [String: [String: Any]] = [:]
        for row in report.rows {
            guard let run = row.runs.first else { continue }
            var entry: [String: Any] = ["read": describe(run.details.digest)]
            if let store = run.details.store { entry["store"] = describe(store) }
            digests[run.core.workload, default: [:]][run.core.engine] = entry
        }
        object["digests"] = digests
        return object
    }
}
