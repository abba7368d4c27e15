/// The workloads of `strata-bench objects`, in the order they run.
enum ObjectsWorkload: String, CaseIterable, Codable, Sendable {
    /// `items` items (and their lists) inserted, `batch` per save.
    case insert
    /// Every item fetched, three properties read from each.
    case fetchall
    /// Equality fetches on the indexed `sku`, the title of each result read.
    case fetchindexed
    /// Each list's `items` read from the list, the amount of each member read.
    case traverse
    /// One property of `updates` items changed, one save.
    case update
    /// A save changing `merges` items taken in by a second view holding them.
    case merge
    /// The object layer only: `faults` objects registered as faults and kept.
    case faults
    /// The object layer only: `observed` items with a key observer each in one context;
    /// another context saves a change of `observedChanges` of them, the first merges it.
    case observe

    /// Workloads only the object layer runs.
    var isObjectsOnly: Bool { self == .faults || self == .observe }
    /// Workloads that change the store (on a copy of the insert store): checked and compared after.
    var changesStore: Bool { self == .insert || self == .update || self == .merge }
    /// Which engines run it.
    func runs(on engine: ObjectsEngineName) -> Bool { !isObjectsOnly || engine == .objects }
}

extension ObjectsWorkload: BenchWorkload {
    var name: String { rawValue }
    /// Workloads that start from the store `insert` leaves.
    var needsStore: Bool { self != .insert && self != .faults }
}
