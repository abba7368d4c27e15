import StrataRecords
import Synchronization

// Computed properties are ordinary Swift properties (so they may be declared in an extension,
// or in a subclass, as well as in the class) whose getter calls `computed` or `cached` with the
// key paths it depends on. A container registers the ones the class lists in
// `computedProperties` when it opens (reading each on a probe); any other registers at its
// first evaluation. From then on a change of a dependency, through to-one and to-many relationships too, tells
// the property's observers, drops its cached values, and shows in
// `changedValuesForCurrentEvent()` of the objects that own it (decision 34).

extension ModelObject where Self: ManagedObject {
    /// The value of a computed property that depends on `dependencies`, evaluated at each read.
    /// Call it in the property's getter; `name` is the property's name (the default,
    /// `#function`, is right there).
    ///
    /// ```swift
    /// extension Person {
    ///     var fullName: String {
    ///         get { computed(dependsOn: \.firstName, \.lastName) { "\(firstName) \(lastName)" } }
    ///         set { coalescingChanges { (firstName, lastName) = Person.split(newValue) } }
    ///     }
    /// }
    /// ```
    ///
    /// Dependencies may go through to-one relationships (`\.author?.name`); for members of a
    /// to-many, name them as strings (`computed(dependsOn: "items.amount")`). Observers of the
    /// property (``observe(_:options:changeHandler:)``, Swift Observation) are told when any
    /// dependency changes, and ``ManagedObject/changedValuesForCurrentEvent()`` names it.
    public func computed<T>(_ name: String = #function, dependsOn dependencies: PartialKeyPath<Self>...,
                            value: () -> T) -> T {
        let info = computedInfo(name, isCached: false) { dependencies.map { KeyPathNames.names(of: $0) } }
        if _isProbe { return probeComputed(name, value) }
        _trackAccess(info.observationKey)
        return value()
    }

    /// ``computed(_:dependsOn:value:)`` with dependencies named as dot-separated property
    /// paths (`"items.amount"`: the `amount` of every member of `items`).
    public func computed<T>(_ name: String = #function, dependsOn dependencies: String..., value: () -> T) -> T {
        let info = computedInfo(name, isCached: false) {
            dependencies.map { $0.split(separator: ".").map(String.init) }
        }
        if _isProbe { return probeComputed(name, value) }
        _trackAccess(info.observationKey)
        return value()
    }

    /// The value of a cached computed property: evaluated on first read, then kept until a
    /// dependency changes (or the object turns into a fault, or is refreshed or rolled back).
    /// Dependencies as for ``computed(_:dependsOn:value:)-(_,PartialKeyPath<Self>...,_)``; the
    /// invalidation is a change of the property: observers are told and
    /// ``ManagedObject/changedValuesForCurrentEvent()`` names it.
    ///
    /// ```swift
    /// var coreLocation: Location {
    ///     cached(dependsOn: \.latitude, \.longitude) { Location(latitude: latitude, longitude: longitude) }
    /// }
    /// ```
    public func cached<T>(_ name: String = #function, dependsOn dependencies: PartialKeyPath<Self>...,
                          value: () -> T) -> T {
        let info = computedInfo(name, isCached: true) { dependencies.map { KeyPathNames.names(of: $0) } }
        if _isProbe { return probeComputed(name, value) }
        return cachedValue(info, value)
    }

    /// ``cached(_:dependsOn:value:)`` with dependencies named as dot-separated property paths.
    public func cached<T>(_ name: String = #function, dependsOn dependencies: String..., value: () -> T) -> T {
        let info = computedInfo(name, isCached: true) { dependencies.map { $0.split(separator: ".").map(String.init) } }
        if _isProbe { return probeComputed(name, value) }
        return cachedValue(info, value)
    }

    /// Runs `changes` as one change for observers: each observed property (and each computed
    /// property depending on what changed) is told once, after the last change, with its value
    /// before the first. For setters of computed properties that set several others.
    public func coalescingChanges<R>(_ changes: () throws -> R) rethrows -> R {
        let batch = _context?.changeBatch ?? ChangeBatch()
        batch.depth += 1
        defer {
            batch.depth -= 1
            if batch.depth == 0 { batch.flush() }
        }
        return try changes()
    }
}

extension ManagedObject {
    /// The registered computed property `name` of this class, registered now if new.
    /// A probe registers too (so a container that reads ``ManagedObject/computedProperties`` on a
    /// probe learns them), and keeps what is wrong for the container to throw.
    final func computedInfo(_ name: String, isCached: Bool, _ paths: () -> [[String]]) -> ComputedInfo {
        let schema = entitySchema
        if let known = schema.computed(named: name) {
            if let probe = _extras?.probe, let problem = schema.computedProblem(name) {
                probe.problems.append("\(name): \(problem)")
            }
            return known
        }
        let (info, problem) = schema.registerComputed(name, isCached: isCached, paths: paths())
        if let problem {
            _context?.misuse.append(.invalidModel(entity: schema.name, property: name, reason: problem))
            _extras?.probe?.problems.append("\(name): \(problem)")
        }
        return info
    }

    final func cachedValue<T>(_ info: ComputedInfo, _ value: () -> T) -> T {
        _trackAccess(info.observationKey)
        if let hit = _extras?.cache[info.name] as? T { return hit }
        let fresh = value()
        extras.cache[info.name] = fresh
        return fresh
    }

    /// A probe prototype read a computed property (a key path to it is being resolved): the
    /// name is recorded; the reads of its body are not.
    final func probeComputed<T>(_ name: String, _ value: () -> T) -> T {
        let recorder = _extras?.probe
        recorder?.names.append(name)
        recorder?.muted += 1
        defer { recorder?.muted -= 1 }
        return value()
    }
}

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

/// A property another one depends on, seen from the property that changes: the owner's
/// property `key` depends on it through `hops` (the relationships from the owner to here, in
/// order).
struct Dependent: @unchecked Sendable {
    let owner: EntitySchema
    let key: String
    let hops: [Hop]

    struct Hop {
        /// The schema the relationship belongs to, and its name.
        let schema: EntitySchema
        let relationship: String
    }
}
