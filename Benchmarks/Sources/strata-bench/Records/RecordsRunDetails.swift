/// What a `records` run measured besides the ``RunCore``.
struct RecordsRunDetails: RunDetails {
    /// Sums over the store (or the queries' hits), for comparing engines.
    var digest = RecordsDigest()
    /// Set when the run went on for a time window instead of a fixed count: the window's
    /// length in seconds (`ops` is what it did in that time).
    var timeWindowSeconds: Double? = nil

    static var coreNames: RunCore.JSONNames { .swift }
}

/// One `records` run.
typealias RecordsRunResult = RunResult<RecordsRunDetails>
