/// The outcome of an engine's consistency check of a store a workload left behind.
struct StoreCheck {
    /// What is wrong, one line each (a check that could not run is one problem); empty when sound.
    var problems: [String]
    var isClean: Bool { problems.isEmpty }
}
