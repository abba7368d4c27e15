import Foundation

/// What one run of one workload on one engine measured: the ``RunCore`` every benchmark
/// shares, and the benchmark's own figures. The child prints it as one JSON line; the report
/// keeps it in its row's `runs`. Both are one flat object, the core's fields beside the
/// details', as each benchmark wrote its runs before the two were separate types.
struct RunResult<Details: RunDetails>: Sendable {
    var core: RunCore
    var details: Details

    /// The time window the run went on for, if it ran for one instead of a fixed count.
    var timeWindowSeconds: Double? { details.timeWindowSeconds }

    /// `[2/3] fillrandom strata ... 105 K ops/s (9.52 s) …`: what a run measured, as the
    /// benchmark logs it while it goes.
    func progressLine(workload: String, repeatIndex: Int, repeats: Int) -> String {
        var s = "[\(repeatIndex)/\(repeats)] \(workload) \(core.engine) ... "
        s += RateFormat.opsPerSecond(core.opsPerSecond)
        s += String(format: " (%.2f s", core.seconds)
        s += timeWindowSeconds != nil ? ", \(core.ops) ops in a time window)" : ")"
        if let p50 = core.p50Micros, let p99 = core.p99Micros {
            s += String(format: " p50 %.0f µs p99 %.0f µs", p50, p99)
        }
        if let bytes = core.bytes { s += String(format: " %.1f MiB", Double(bytes) / 1_048_576) }
        if let clean = core.checkClean {
            s += clean ? ", check clean" : ", check: \(core.checkProblems ?? 0) problem(s)"
        }
        return s
    }
}

/// A benchmark's own figures of a run (`kv`'s sync counts, `records`' and `objects`' digests):
/// Codable in the same JSON object as the run's core.
protocol RunDetails: Codable, Sendable {
    /// How the benchmark's JSON spells the core's irregular fields.
    static var coreNames: RunCore.JSONNames { get }
    /// The time window the run went on for, where a benchmark runs for one instead of a count.
    var timeWindowSeconds: Double? { get }
}

extension RunDetails {
    var timeWindowSeconds: Double? { nil }
}

extension RunResult: Codable {
    init(from decoder: Decoder) throws {
        core = try RunCore(from: decoder, names: Details.coreNames)
        details = try Details(from: decoder)
    }

    func encode(to encoder: Encoder) throws {
        try core.encode(to: encoder, names: Details.coreNames)
        try details.encode(to: encoder)
    }
}
