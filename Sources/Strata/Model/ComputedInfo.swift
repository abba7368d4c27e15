/// A computed property as its class's schema knows it.
final class ComputedInfo: @unchecked Sendable {
    let name: String
    let isCached: Bool
    /// The dependency paths, as property names.
    let paths: [[String]]
    /// What Swift Observation tracks for it (see ``ManagedObject/observationKeyPath(_:)``).
    let observationKey: KeyPath<ManagedObject, Int>

    init(name: String, isCached: Bool, paths: [[String]]) {
        self.name = name
        self.isCached = isCached
        self.paths = paths
        self.observationKey = ManagedObject.observationKeyPath(name)
    }
}
