import StrataRecords
import Synchronization

// Typed key paths of model classes where the record layer takes property names: sorts,
// predicates, and the names themselves. `\Item.title` is a computed property of the class (its
// wrapper's enclosing-instance accessor), so its name is learnt once by reading it on a probe
// prototype, then cached per key path.

extension ManagedObject {
    /// The persistent property path `keyPath` reads, dot-separated (`\Item.title`: `"title"`;
    /// `\Item.list?.name`: `"list.name"`), or nil when it reads no persistent property.
    public static func propertyPath<Root: ManagedObject, V>(_ keyPath: KeyPath<Root, V>) -> String? {
        let names = KeyPathNames.names(of: keyPath)
        return names.isEmpty ? nil : names.joined(separator: ".")
    }
}

extension PropertyPath {
    /// The typed predicate builder's key path from a model class's key path:
    /// `PropertyPath(\Item.amount) > 50`, `PropertyPath(\Item.list?.name) == "Home"`. A key path
    /// that reads no persistent property becomes `SELF` (a fetch then rejects the comparison).
    public init<Root: ManagedObject, V>(_ keyPath: KeyPath<Root, V>) {
        self.init(path: KeyPathNames.names(of: keyPath))
    }
}

extension FetchPredicate {
    /// `{title, body} CONTAINSWORDS query` from a model class's key paths (or
    /// `CONTAINSANYWORD` for `.anyWord`): the properties' values together hold every word of
    /// `query` (or one), answered through the class's word index over them
    /// (``ManagedObject/fullTextIndexes``) when it has one:
    /// `FetchPredicate.words(of: [\Note.title, \Note.body], matching: "cafe stor*")`.
    public static func words<Root: ManagedObject>(of keyPaths: [PartialKeyPath<Root>],
                                                  matching query: some PredicateArgument,
                                                  match: TextSearch.Match = .allWords) -> FetchPredicate {
        words(of: keyPaths.map { PropertyPath(path: KeyPathNames.names(of: $0)) }, matching: query, match: match)
    }
}

extension FetchSortDescriptor {
    /// Sorts by the persistent property `keyPath` reads: `FetchSortDescriptor(\Item.title)`.
    public init<Root: ManagedObject, V>(_ keyPath: KeyPath<Root, V>, ascending: Bool = true) {
        self.init(KeyPathNames.names(of: keyPath).joined(separator: "."), ascending: ascending)
    }
}

/// Resolved key paths, by key path equality (a key path literal may be a new object each time
/// it is evaluated: equal ones share an entry, so the cache is bounded by the program's key paths).
enum KeyPathNames {
    /// A key path as a dictionary key. Key paths are immutable, so sharing them is safe.
    private struct Entry: Hashable, @unchecked Sendable {
        let keyPath: AnyKeyPath
    }

    private static let cache = Mutex<[Entry: [String]]>([:])

    static func names<Root: ManagedObject>(of keyPath: PartialKeyPath<Root>) -> [String] {
        let entry = Entry(keyPath: keyPath)
        if let hit = cache.withLock({ $0[entry] }) { return hit }
        let names = ManagedObject.probePath(of: keyPath)
        cache.withLock { $0[entry] = names }
        return names
    }
}
