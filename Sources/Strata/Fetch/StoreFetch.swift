import StrataRecords

/// What the store answers of a ``FetchDescriptor``, without its class parameter.
///
/// Why: the fetch path is compiled once, generic over the model class, and every use of a
/// `FetchDescriptor<T>` there looked up its generic metadata (and that of
/// `[InMemorySortDescriptor<T>]`) in the runtime's table, several times a fetch (decision 56).
/// The public `fetch` is inlined into the caller, where `T` is known, and hands the store's
/// part over as this.
@usableFromInline
struct StoreFetch {
    @usableFromInline var predicate: FetchPredicate?
    @usableFromInline var sortBy: [FetchSortDescriptor]
    @usableFromInline var fetchLimit: Int?
    @usableFromInline var fetchOffset: Int
    @usableFromInline var includesPendingChanges: Bool
    @usableFromInline var returnsObjectsAsFaults: Bool
    @usableFromInline var fetchBatchSize: Int
    @usableFromInline var relationshipKeyPathsForPrefetching: [String]
    /// The class the descriptor fetches (`T`).
    @usableFromInline let objectClass: ManagedObject.Type

    @inlinable
    init<T: ManagedObject>(_ descriptor: FetchDescriptor<T>) {
        predicate = descriptor.predicate
        sortBy = descriptor.sortBy
        fetchLimit = descriptor.fetchLimit
        fetchOffset = descriptor.fetchOffset
        includesPendingChanges = descriptor.includesPendingChanges
        returnsObjectsAsFaults = descriptor.returnsObjectsAsFaults
        fetchBatchSize = descriptor.fetchBatchSize
        relationshipKeyPathsForPrefetching = descriptor.relationshipKeyPathsForPrefetching
        objectClass = T.self
    }

    /// The key paths the store's predicate and sort name, as components.
    var storeKeyPaths: [[String]] {
        var paths: [[String]] = []
        forEachStoreKeyPath { paths.append($0) }
        return paths
    }

    /// Calls `body` with each key path the store's predicate and sort name, as components, in
    /// order (every fetch checks them: no array of them is built).
    func forEachStoreKeyPath(_ body: ([String]) throws -> Void) rethrows {
        func walk(_ expression: FetchExpression) throws {
            switch expression {
            case .constant, .variable: break
            case .keyPath(let path), .aggregate(_, let path): try body(path)
            case .list(let list): for item in list { try walk(item) }
            }
        }
        func walk(_ predicate: FetchPredicate) throws {
            switch predicate {
            case .constant: break
            case .comparison(let comparison): try walk(comparison.lhs); try walk(comparison.rhs)
            case .and(let subpredicates), .or(let subpredicates): for item in subpredicates { try walk(item) }
            case .not(let negated): try walk(negated)
            }
        }
        if let predicate { try walk(predicate) }
        for sort in sortBy { try body(sort.keyPath.split(separator: ".").map(String.init)) }
    }
}

extension StoreFetch {
    /// The record layer's request for these objects of `entity` (the binding's name).
    func request(_ entity: String) -> FetchRequest {
        FetchRequest(entity, predicate: predicate, sortedBy: sortBy, limit: fetchLimit, offset: fetchOffset)
    }

    /// Throws for a store predicate or sort naming a computed or transient property, saying
    /// to filter or sort it in memory (the record layer alone would call the name unknown,
    /// or transient without the way out).
    func checkStoreKeys(_ root: EntityBinding, in container: ModelContainer) throws {
        try forEachStoreKeyPath { path in
            var binding = root
            for (i, name) in path.enumerated() {
                if let slot = binding.schema.slotByName[name] {
                    // The slot's kind, not its declaration (copying a `Property` per check).
                    if binding.schema.slotKinds[slot] == .transient {
                        throw StrataError.invalidFetch("'\(name)' of \(binding.name) is transient: "
                            + "the store cannot filter or sort by it; "
                            + "use the fetch's inMemoryFilter or inMemorySortBy")
                    }
                    guard i < path.count - 1, binding.targetEntity[slot] >= 0 else { break }
                    binding = container.bindings[binding.targetEntity[slot]]
                } else {
                    if binding.schema.computed(named: name) != nil {
                        throw StrataError.invalidFetch("'\(name)' of \(binding.name) is a computed property: "
                            + "the store cannot filter or sort by it; "
                            + "use the fetch's inMemoryFilter or inMemorySortBy")
                    }
                    // A computed property is known by name from the container's open when its
                    // class lists it in computedProperties, else once read; before that, and for
                    // any other Swift property, the store only knows it has no such property.
                    throw StrataError.invalidFetch("\(binding.name) has no stored property '\(name)' "
                        + "(in '\(path.joined(separator: "."))'); "
                        + "to filter or sort by a computed property, use the fetch's inMemoryFilter or inMemorySortBy")
                }
            }
        }
    }
}
