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
                for n in saves {
                    // Every updated row (and every linked one) has its changed keys listed.
                    touchedResult = touchedResult || n.deletedIDs.contains(where: ids.contains)
                        || n.changedKeys.keys.contains(where: ids.contains)
                    for e in n.entitiesChanged where reads.contains(e) {
                        if e == name { changedFetched = true } else { changedRead = true }
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
            seen = context.container.store.storage.lastCommittedTransactionID
            let results = try context.fetch(descriptor)
            current = results
            return results
        }
    }
}

/// One object, now and again after every save that changes it (its stored or derived values,
/// its relationships); the sequence ends when a save deletes it, or when the task is cancelled.
/// Like ``FetchResults``, its context takes in other contexts' saves while it is iterated, and
/// computed properties depending on other objects are followed by observers, not here.
public struct ObjectUpdates<T: ManagedObject>: AsyncSequence {
    public typealias Element = T
    public typealias Failure = Never

    let object: T

    /// Starts following the store: saves from here on are considered.
    public func makeAsyncIterator() -> Iterator { Iterator(object) }

    /// Iterates over an ``ObjectUpdates``.
    public struct Iterator: AsyncIteratorProtocol {
        let lease: ChangeSequenceLease?
        let object: T
        var started = false
        var seen: UInt64 = 0

        init(_ object: T) {
            self.object = object
            lease = object.context.map(ChangeSequenceLease.init)
        }

        /// The object now (first call), then after the next save that changes it; nil once
        /// a save deleted it (or when it belongs to no context, or the task is cancelled).
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async -> T? {
            guard let lease, !object._flags.contains(.gone) else { return nil }
            if !started {
                started = true
                seen = lease.context.container.store.storage.lastCommittedTransactionID
                return object
            }
            while let saves = await lease.nextSaves(after: seen, isolation: actor) {
                // Saves of its own context gave it a permanent identifier already.
                let id = object.objectID
                if saves.contains(where: { $0.deletedIDs.contains(id) }) {
                    lease.context.processPendingMerges()
                    return nil
                }
                if saves.contains(where: { $0.insertedIDs.contains(id) || $0.changedKeys[id] != nil }) {
                    lease.context.processPendingMerges()
                    return object
                }
            }
            return nil
        }

        /// The form `it.next()` resolves to; runs in the caller's isolation (see
        /// ``FetchResults/Iterator/next()``).
        #if compiler(>=6.2)
        public nonisolated(nonsending) mutating func next() async -> T? { await next(isolation: #isolation) }
        #else
        public mutating func next() async -> T? { await next(isolation: nil) }
        #endif
    }
}

extension ModelContext {
    /// The results of `descriptor`, now and after every save that affects them (see
    /// ``FetchResults``).
    public func results<T: ManagedObject>(of descriptor: FetchDescriptor<T>) -> FetchResults<T> {
        FetchResults(context: self, descriptor: descriptor)
    }

    /// `object`, now and after every save that changes it, until a save deletes it (see
    /// ``ObjectUpdates``). An object of no context yields nothing.
    public func updates<T: ManagedObject>(of object: T) -> ObjectUpdates<T> {
        ObjectUpdates(object: object)
    }

    /// The entities a fetch reads: its own, and those its predicate and sort key paths reach
    /// through relationships. With an in-memory filter or sort (closures over computed
    /// properties, whose dependencies it cannot see), every entity reachable through
    /// relationships counts.
    func entitiesRead<T: ManagedObject>(by descriptor: FetchDescriptor<T>) throws -> Set<String> {
        guard let root = container.binding(of: EntitySchema.of(T.self)) else {
            throw StrataError.misuse("\(T.self) is not one of the container's model classes")
        }
        var names: Set<String> = [root.name]
        if descriptor.refinesInMemory {
            var stack = [root]
            while let b = stack.popLast() {
                for t in b.targetEntity where t >= 0 && names.insert(container.bindings[t].name).inserted {
                    stack.append(container.bindings[t])
                }
            }
            return names
        }
        for path in StoreFetch(descriptor).storeKeyPaths {
            var b = root
            // Every relationship on the path is read, the last component's too (`items.@count`).
            for component in path {
                guard let slot = b.schema.slotByName[component], b.targetEntity[slot] >= 0 else { break }
                b = container.bindings[b.targetEntity[slot]]
                names.insert(b.name)
            }
        }
        return names
    }
}

extension SaveNotification {
    /// The entities of the rows the save inserted, changed, deleted or linked.
    var entitiesChanged: Set<String> {
        var names = Set<String>()
        for r in changes.inserted { names.insert(r.id.entity) }
        for r in changes.updated { names.insert(r.id.entity) }
        for r in changes.deleted { names.insert(r.id.entity) }
        for l in changes.links { names.insert(l.id.entity) }
        return names
    }
}
