/// What an `objects` run measured besides the ``RunCore``.
struct ObjectsRunDetails: RunDetails {
    /// What the timed part read (empty for insert and update).
    var digest = ObjectsDigest()
    /// What the store holds afterwards, for the workloads that change it.
    var store: ObjectsDigest? = nil
    var faults: FaultFigures? = nil
    var observation: ObservationFigures? = nil

    static var coreNames: RunCore.JSONNames { .swift }
}

/// One `objects` run.
typealias ObjectsRunResult = RunResult<ObjectsRunDetails>
