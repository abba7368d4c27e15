/// How big `strata-bench kv` is: keys, repeats and fillsync's commits.
struct KVScale: Equatable, Sendable {
    var count: Int
    var repeats: Int
    var syncCommits: Int

    /// `make bench`'s sizes: a fifth of the keys, a tenth of the durable commits (fillsync runs
    /// five times: three engines, two of them again under strace), one run of each workload.
    static let `default` = KVScale(count: 200_000, repeats: 1, syncCommits: 1_000)
    /// The original sizes (the defaults before scales existed): 1,000,000 keys, 3 runs, 10,000 commits.
    static let full = KVScale(count: 1_000_000, repeats: 3, syncCommits: 10_000)

    static func preset(_ scale: BenchScale) -> KVScale {
        switch scale {
        case .default: return .default
        case .full: return .full
        }
    }
}
