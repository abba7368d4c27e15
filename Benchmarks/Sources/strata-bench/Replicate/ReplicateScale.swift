/// The sizes of a `replicate` run: the store the first push copies, the transactions the
/// measured pushes apply, and the steady commit rate the lag is measured under.
struct ReplicateScale: Equatable {
    /// The store before the first push: lists, items spread over them, tags, and each item's
    /// tag links (0 to 2, one on average).
    var lists: Int
    var items: Int
    var tags: Int
    /// Small app-like transactions committed between the copy and the measured pushes.
    var transactions: Int
    /// Commits per second while `strata replicate --follow` runs, and for how long.
    var rate: Int
    var followSeconds: Double
    var seed: UInt64 = 26

    /// `default`: what `make bench` runs, about 30 s after the cluster starts, most of it the
    /// `--batch 1` push (one round trip per statement of each transaction). `full`: a store
    /// ten times larger, five times the transactions, a longer steady phase (about 3 minutes).
    static func preset(_ scale: BenchScale) -> ReplicateScale {
        switch scale {
        case .default:
            return ReplicateScale(lists: 5_000, items: 50_000, tags: 100, transactions: 10_000, rate: 500, followSeconds: 5)
        case .full:
            return ReplicateScale(lists: 50_000, items: 500_000, tags: 1_000, transactions: 50_000, rate: 500,
                                  followSeconds: 20)
        }
    }
}
