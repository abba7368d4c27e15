import StrataStorage
import Synchronization

/// Prepared fetches by the shape of their request (the request with each constant made a
/// variable), so that a fetch repeated with other constants is checked and planned once, as
/// an explicit ``PreparedFetch`` is.
///
/// Bounded: when it holds ``capacity`` shapes it starts again empty (an application runs a
/// few dozen shapes; one that builds requests of ever new shapes pays a plan per fetch, as
/// without the cache, and no memory).
final class FetchPlanCache: Sendable {
    static let capacity = 256
    /// By the hash of the shape; a bucket holds the shapes that share it.
    private let prepared = Mutex<(count: Int, byHash: [UInt64: [PreparedFetch]])>((0, [:]))

    /// The prepared fetch of `request`'s shape (prepared the first time) and the request's
    /// constants, its values; nil for a request that is not planned by shape (see
    /// ``FetchRequest/shape()``).
    ///
    /// Finding it walks the request twice (a hash, then a comparison with the cached shape),
    /// building nothing but the array of constants.
    func prepared(for request: FetchRequest, model: Model) throws -> (PreparedFetch, [StoredValue])? {
        guard request.usesIndexes, let predicate = request.predicate else { return nil }
        var hasher = ShapeHasher()
        var constants: [StoredValue] = []
        hasher.combine(request.entity)
        for sortDescriptor in request.sortDescriptors {
            hasher.combine(sortDescriptor.keyPath)
            hasher.combine(sortDescriptor.ascending ? 1 : 2)
        }
        hasher.combine(UInt64(bitPattern: Int64(request.limit ?? -1)))
        hasher.combine(UInt64(request.offset))
        guard predicate.hashShape(into: &hasher, constants: &constants) else { return nil }
        let hash = hasher.value
        let found = prepared.withLock { cache in cache.byHash[hash]?.first { $0.request.hasShape(of: request) } }
        if let found { return (found, constants) }
        guard let shape = request.shape() else { return nil }
        let fetch = try PreparedFetch(shape, model: model)
        prepared.withLock { cache in
            if cache.count >= Self.capacity { cache = (0, [:]) }
            cache.byHash[hash, default: []].append(fetch)
            cache.count += 1
        }
        return (fetch, constants)
    }

    var count: Int { prepared.withLock { $0.count } }
}
