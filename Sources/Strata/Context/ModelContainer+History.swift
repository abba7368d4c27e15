import StrataRecords

extension ModelContainer {
    /// The store's recorded transactions after `token`, oldest first, at most `limit` of them:
    /// only those with a change to an object of one of `entities` (their other changes left
    /// out), and only those whose author is among `authors`; `nil` takes every entity or
    /// author. A context applies one with ``ModelContext/mergeChanges(from:)-(HistoryTransaction)``.
    ///
    /// Throws `StrataError.historyPurged(after:purgedThrough:)` when transactions after `token`
    /// are gone (read the objects afresh), and the errors of
    /// `RecordReader.history(after:limit:)`.
    public func history(after token: HistoryToken = .start, limit: Int = .max,
                        entities: [ManagedObject.Type]? = nil, authors: Set<String>? = nil) throws
        -> [HistoryTransaction] {
        try requireOpen("history")
        let names = entities.map { Set($0.map { EntitySchema.of($0).name }) }
        guard names != nil || authors != nil else { return try store.history(after: token, limit: limit) }
        var found: [HistoryTransaction] = []
        var after = token
        // Filtering can leave a page empty: read on until `limit` transactions matched or the
        // history ends.
        while found.count < limit {
            let page = try store.history(after: after, limit: 256)
            guard let last = page.last else { break }
            after = last.token
            for var transaction in page {
                if let authors, !authors.contains(transaction.author ?? "") { continue }
                if let names {
                    transaction.changes.removeAll { !names.contains($0.id.entity) }
                    if transaction.changes.isEmpty { continue }
                }
                found.append(transaction)
                if found.count == limit { break }
            }
        }
        return found
    }

    /// The token of the store's newest recorded transaction (`HistoryToken.start` when none):
    /// save it after reading the objects, to ask later for what changed since.
    public func lastHistoryToken() throws -> HistoryToken {
        try requireOpen("lastHistoryToken")
        return try store.lastHistoryToken()
    }

    /// Deletes the recorded transactions up to `token`; returns how many it deleted.
    @discardableResult
    public func purgeHistory(through token: HistoryToken) throws -> Int {
        try requireOpen("purgeHistory")
        return try store.purgeHistory(through: token)
    }
}
