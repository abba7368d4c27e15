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
        func walk(_ e: FetchExpression) throws {
            switch e {
            case .constant, .variable: break
            case .keyPath(let p), .aggregate(_, let p): try body(p)
            case .list(let l): for item in l { try walk(item) }
            }
        }
        func walk(_ p: FetchPredicate) throws {
            switch p {
            case .constant: break
            case .comparison(let c): try walk(c.lhs); try walk(c.rhs)
            case .and(let l), .or(let l): for item in l { try walk(item) }
            case .not(let q): try walk(q)
            }
        }
        if let predicate { try walk(predicate) }
        for s in sortBy { try body(s.keyPath.split(separator: ".").map(String.init)) }
    }
}

/// Objects a fetch made, all of one class: what ``ModelContext/fetch(_:)`` returns as `[T]`.
@usableFromInline
struct FetchedObjects {
    @usableFromInline let objects: [ManagedObject]
    /// The class of every object (the binding's class, found by the fetched class's schema).
    @usableFromInline let objectClass: ManagedObject.Type

    @usableFromInline
    init(objects: [ManagedObject], objectClass: ManagedObject.Type) {
        self.objects = objects
        self.objectClass = objectClass
    }

    /// The objects as `[T]`. Every object is of `objectClass`, which is `T` when the fetch was
    /// of `T`, so the array is reinterpreted whole, as the standard library's own array
    /// downcast does once it has checked the elements (a `compactMap` with `as?` cost ~1K
    /// instructions per fetched object in unspecialized code).
    @inlinable
    func cast<T: ManagedObject>(to type: T.Type) -> [T] {
        guard objectClass == T.self else { return objects.compactMap { $0 as? T } }
        return unsafeBitCast(objects, to: [T].self)
    }
}
