import StrataRecords

/// What the store answers of a ``FetchDescriptor``, without its class parameter.
///
/// Why: the fetch path is compiled once, generic over the model class, and every use of a
/// `FetchDescriptor<T>` there looked up its generic metadata (and that of
/// `[InMemorySortDescriptor<T>]`) in the runtime's table: ~330 instructions a lookup, about
/// seven a fetch, 9% of an indexed lookup's cost (callgrind, decision 56). The public `fetch`
/// is inlined into the caller, where `T` is known, and hands the store's part over as this.
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
