import StrataStorage

/// What a record store lets through of its page file: the maintenance a user runs (checks,
/// checkpoints, compaction, backups, figures), and, for the layers above in this package, when
/// commits happen. Never the page file's trees: rows, indexes and derived values change only
/// through ``RecordTransaction``, which keeps them consistent.
extension RecordStore {
    /// Checks the page file: checksums, page layouts, key order and reachability (the record
    /// layer's own structures: ``RecordReader/checkRecords(limit:)``).
    public func checkPages() throws -> CheckReport { try storage.check() }

    /// Writes a checkpoint now (a commit's pages are otherwise written as checkpoints come due).
    public func checkpoint() throws { try storage.checkpoint() }

    /// Rewrites the file with only its live pages, while readers and the writer carry on.
    @discardableResult
    public func compact() throws -> Store.CopyReport { try storage.compact() }

    /// Writes a consistent copy of the store to `destination`.
    @discardableResult
    public func backup(to destination: String) throws -> Store.CopyReport { try storage.backup(to: destination) }

    /// The page file's figures: its size, live and dead bytes, trees, snapshots and writer.
    public func info() throws -> StoreInfo { try storage.info() }

    /// The page file's counters (commits, syncs, checkpoints, cache).
    public var pageFileStatistics: Store.Statistics { storage.statistics }

    // MARK: Commits, for the layers above

    /// The id of the newest commit this handle knows: its own, and for a store shared between
    /// processes, the others' it has taken in.
    package var lastCommitID: UInt64 { storage.lastCommittedTransactionID }

    /// Returns the id of the newest commit once it is after `commitID` (this process's or,
    /// shared, any process's), or nil when `timeout` passes first or the task is cancelled.
    package func waitForCommit(after commitID: UInt64, timeout: Duration? = nil) async throws -> UInt64? {
        try await storage.waitForCommit(after: commitID, timeout: timeout)
    }

    /// Takes in other processes' commits without waiting for this process's writer; returns
    /// whether there were any.
    @discardableResult
    package func refreshWithoutWaiting() throws -> Bool { try storage.refresh(waitingForWriter: false) }

    /// Calls `observer` with the ids of other processes' commits as this handle takes them in
    /// (on the thread that caught up, while the writer gate is held: it must not use the store).
    /// Returns a token for ``removeOtherProcessCommitObserver(_:)``.
    package func addOtherProcessCommitObserver(_ observer: @escaping @Sendable (ClosedRange<UInt64>) -> Void) -> UInt64 {
        storage.addOtherProcessCommitObserver(observer)
    }

    /// Stops calling the observer `token` names.
    package func removeOtherProcessCommitObserver(_ token: UInt64) {
        storage.removeOtherProcessCommitObserver(token)
    }
}
