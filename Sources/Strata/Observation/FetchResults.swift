import StrataRecords

/// The results of a fetch, now and again after every save that affects them: GRDB's
/// `ValueObservation` for managed objects.
///
/// ```swift
/// for try await items in context.results(of: FetchDescriptor<Item>(sortBy: [.init("title")])) {
///     show(items)
/// }
/// ```
///
/// The first element is the fetch's results when iteration starts. After that, a save (of
/// any context of the container) yields new results when it
/// - changed or deleted an object of the results (stored or derived values, relationships),
/// - or inserted, changed or deleted objects of the fetched class so that running the fetch
///   again gives other objects or another order,
/// - or changed objects of another class the fetch reads through a relationship (a predicate
///   such as `list.name == "Home"`, a sort by `list.name`; with an in-memory filter or sort,
///   any class reachable through relationships, since a computed key may read it): then the
///   results are fetched again and yielded without comparing.
///
/// Saves that change nothing of this are not yielded for, and those touching no class the
/// fetch reads cost a few dictionary lookups, without fetching (decision 35). Computed
/// properties of the results that depend on other objects are followed by
/// ``ManagedObject/observe(_:options:changeHandler:)`` and Swift Observation, not here.
///
/// While the sequence is iterated, its context takes in other contexts' saves as if
/// ``ModelContext/automaticallyMergesChangesFromStore`` were on, so the objects yielded show the
/// saved values. Iterate it in the context's isolation domain; cancelling the task ends it.
public struct FetchResults<T: ManagedObject>: AsyncSequence {
    public typealias Element = [T]
    public typealias Failure = any Error

    let context: ModelContext
    let descriptor: FetchDescriptor<T>

    /// Starts following the store: saves from here on are considered.
    public func makeAsyncIterator() -> Iterator { Iterator(ChangeSequenceLease(context), descriptor) }

    /// Iterates over a ``FetchResults``.
    public struct Iterator: AsyncIteratorProtocol {
        let lease: ChangeSequenceLease
        let descriptor: FetchDescriptor<T>
        var current: [T]?
        /// The commit the current results were read at.
        var seen: UInt64 = 0
        var reads: Set<String>?

        init(_ lease: ChangeSequenceLease, _ descriptor: FetchDescriptor<T>) {
            self.lease = lease
            self.descriptor = descriptor
        }

        /// The results now (first call), then after the next save that affects them; nil when
        /// the task is cancelled.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws -> [T]? {
            let context = lease.context
            guard let old = current else { return try fetch(context) }
            let reads = try self.reads ?? context.entitiesRead(by: descriptor)
            self.reads = reads
            let name = EntitySchema.of(T.self).name
            while let saves = await lease.nextSaves(after: seen, isolation: actor) {
                var changedRead = false, touchedResult = false, changedFetched = false
                // Read after the wait: an inserted result's identifier turns permanent when saved.
                let ids = Set(old.map(\.objectID))
                for save in saves {
                    // Every updated row (and every linked one) has its changed keys listed.
                    touchedResult = touchedResult || save.deletedIDs.contains(where: ids.contains)
                        || save.changedKeys.keys.contains(where: ids.contains)
                    for entity in save.entitiesChanged where reads.contains(entity) {
                        if entity == name { changedFetched = true } else { changedRead = true }
                    }
                }
                // Only a fetch moves `seen`: saves arrive from other threads in any order, and
                // one committed before a dropped one must still be considered.
                guard changedRead || touchedResult || changedFetched else { continue }
                let results = try fetch(context)
                if changedRead || touchedResult || !results.elementsEqual(old, by: ===) { return results }
            }
            return nil
        }

        /// The form `it.next()` resolves to. It runs in the caller's isolation (the context's
        /// actor, usually the main one), like ``next(isolation:)``: a plain nonisolated `next()`
        /// would read the context off its actor, and Swift rejects calling it from the main actor
        /// ("sending 'it' risks causing data races").
        #if compiler(>=6.2)
        public nonisolated(nonsending) mutating func next() async throws -> [T]? {
            try await next(isolation: #isolation)
        }
        #else
        public mutating func next() async throws -> [T]? { try await next(isolation: nil) }
        #endif

        private mutating func fetch(_ context: ModelContext) throws -> [T] {
            // A save committed before the fetch reads is in its results: not a change to yield.
            seen = context.container.store.lastCommitID
            let results = try context.fetch(descriptor)
            current = results
            return results
        }
    }
}
