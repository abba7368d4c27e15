import ArgumentParser
import Foundation

/// The options `kv`, `records` and `objects` take alike: where the results go besides the
/// table, and where the work files go.
struct BenchOptions: ParsableArguments {
    @Option(help: "Also write the results as JSON to this file.") var json: String?
    @Option(help: "Also write the results as one HTML page (bar chart and table) to this file.") var report: String?
    @Option(help: "Put work files in a fresh directory under this one (default: /tmp).") var dir: String?
    @Flag(help: "Keep the work files.") var keep = false

    /// Runs `body` with a fresh work directory, removed afterwards unless `--keep`; logs how
    /// long `command` took in all.
    func withWorkDirectory<T>(_ command: String, _ body: (String) throws -> T) throws -> T {
        let started = Measure.now()
        defer { log("strata-bench \(command): \(RateFormat.duration(Double(Measure.now() - started) / 1e9)) in all") }
        let root = try Measure.makeWorkDirectory(under: dir)
        defer {
            if keep { log("work files kept in \(root)") } else { try? FileManager.default.removeItem(atPath: root) }
        }
        return try body(root)
    }

    /// The HTML page of `sections`, if `--report` asked for one.
    func writePage(_ sections: [ReportSection]) throws {
        if let report { try HTMLReport(sections: sections).write(to: report) }
    }
}

/// The values `parse` makes of each item of a comma-separated list (`strata,sqlite`), or an
/// error naming the first item it cannot make (`unknown engine 'x'`).
func parseList<T>(_ list: String, of what: String, _ parse: (String) -> T?) throws -> [T] {
    try list.split(separator: ",").map {
        guard let value = parse($0.trimmingCharacters(in: .whitespaces)) else {
            throw ValidationError("unknown \(what) '\($0)'")
        }
        return value
    }
}
