/// The `replicate` benchmark's own figures of a phase, beside the ``RunCore`` (whose `ops` are
/// the rows PostgreSQL wrote and whose `seconds` are the push's own time, as the tool reports
/// it; for `follow`, the paced window's, and its p50/p99 the transactions' lag in µs).
struct ReplicateRunDetails: RunDetails {
    static var coreNames: RunCore.JSONNames { .swift }

    /// Strata transactions applied, the history changes they held, PostgreSQL transactions
    /// that applied them, and the tool's pushes (one, but for `follow`).
    var transactions: Int
    var changes: Int
    var batches: Int
    var pushes: Int
    /// Where the CPU went while the tool ran.
    var cpu: CPUShares
    /// Whether PostgreSQL equalled the store on the digest after the phase.
    var digestEqual: Bool
    /// `follow` only: the paced commits and how long they took; the pushes' own `lagSeconds`
    /// (the newest transaction's age as each push ended): median and maximum; each
    /// transaction's lag (from its commit until a reader of PostgreSQL sees it): median, p99,
    /// maximum; the pushes' times, median and maximum; and every push's line.
    var committed: Int? = nil
    var commitSeconds: Double? = nil
    var pushLagMedianSeconds: Double? = nil
    var pushLagMaxSeconds: Double? = nil
    var lagMedianSeconds: Double? = nil
    var lagP99Seconds: Double? = nil
    var lagMaxSeconds: Double? = nil
    var pushMedianSeconds: Double? = nil
    var pushMaxSeconds: Double? = nil
    var pushLines: [PushLine]? = nil
}

extension ReplicateRunDetails {
    /// The figures of a one-shot push.
    init(_ push: ReplicatePush, digestEqual: Bool) {
        self.init(transactions: push.line.transactions, changes: push.line.changes, batches: push.line.batches, pushes: 1,
                  cpu: push.cpu, digestEqual: digestEqual)
    }

    /// The figures of the steady phase.
    init(_ follow: ReplicateFollow, digestEqual: Bool) {
        let pushLags = follow.lags, lags = follow.transactionLags
        self.init(transactions: follow.pushes.reduce(0) { $0 + $1.transactions },
                  changes: follow.pushes.reduce(0) { $0 + $1.changes }, batches: follow.pushes.reduce(0) { $0 + $1.batches },
                  pushes: follow.pushes.count, cpu: follow.cpu, digestEqual: digestEqual, committed: follow.committed,
                  commitSeconds: follow.commitSeconds, pushLagMedianSeconds: pushLags.isEmpty ? nil : Measure.median(pushLags),
                  pushLagMaxSeconds: pushLags.last, lagMedianSeconds: lags.isEmpty ? nil : Measure.median(lags),
                  lagP99Seconds: Self.percentile(lags, 0.99), lagMaxSeconds: lags.last,
                  pushMedianSeconds: follow.pushes.isEmpty ? nil : Measure.median(follow.pushes.map(\.seconds)),
                  pushMaxSeconds: follow.pushes.map(\.seconds).max(), pushLines: follow.pushes)
    }

    /// The nearest-rank percentile `p` of sorted `values`, nil for none.
    static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        return values[min(max(Int((p * Double(values.count)).rounded(.up)) - 1, 0), values.count - 1)]
    }
}
