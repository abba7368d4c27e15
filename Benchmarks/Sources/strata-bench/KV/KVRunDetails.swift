/// What a `kv` run measured besides the ``RunCore``.
struct KVRunDetails: RunDetails {
    /// The engine's own sync counter delta over the timed commits (Strata only, fillsync).
    var ownSyncs: Int? = nil
    /// fillsync's commits.
    var commits: Int? = nil
    /// A value computed from every result (lengths summed), printed so no read can be elided.
    var checksum: Int

    static var coreNames: RunCore.JSONNames { .snakeCase }
}

/// One `kv` run.
typealias KVRunResult = RunResult<KVRunDetails>
