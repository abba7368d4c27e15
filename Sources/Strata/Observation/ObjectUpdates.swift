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
                seen = lease.context.container.store.lastCommitID
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
