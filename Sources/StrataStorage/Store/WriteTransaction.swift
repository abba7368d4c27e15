/// The one write transaction of the moment: it sees its own changes, and commits all of them
/// atomically when the closure passed to ``Store/write(_:)-81bh`` returns (or none, if it throws or
/// calls ``rollback()``).
///
/// **Lifetime.** The transaction, and every ``WriteTree`` and ``Cursor`` made from it, may be
/// used only inside its closure. Once the closure has returned (and the commit succeeded or
/// failed), every throwing method of each of them throws
/// ``StrataError/transactionEnded(_:)`` saying whether the transaction committed or rolled
/// back; nothing is read or changed.
///
/// **Failure.** An operation either throws before it changes anything (a bad key, a full disk
/// while writing an overflow value, a page that cannot be read during the descent), and the
/// transaction carries on as if it had not been called; or, if it fails after it began to
/// change the trees, it marks the transaction failed: it and every later operation throw
/// ``StrataError/transactionFailed(cause:)``, and so does the commit, even if the closure
/// caught the error and returned. Only ``rollback()`` is still allowed (LMDB's `MDB_TXN_ERROR`).
///
/// Not thread-safe: use it only inside its closure, on that thread.
///
/// Exclusivity: the stored properties marked `@exclusivity(unchecked)` run on every key (a
/// dynamic check is a `swift_beginAccess` call on every access; decision 29). None of them is
/// ever passed `inout` or borrowed across a call that touches it again; the whole suite passes
/// with the checks on (build without the attributes to recheck).
public final class WriteTransaction {
    let base: Version
    /// This transaction's id: one more than the last committed. Readable at any time.
    public let transactionID: UInt64
    let log: LogWriter
    @exclusivity(unchecked) var trees: [String: MutableTree] = [:]
    /// Names of committed trees this transaction dropped (a tree created since under the same
    /// name is in ``trees``).
    var droppedNames: Set<String> = []
    /// Every tree dropped, for the space they free: a name dropped twice (the committed tree,
    /// then one created since) is two trees, each with frames of its own.
    var droppedTrees: [MutableTree] = []
    var nextTreeID: UInt32
    @exclusivity(unchecked) var record = CommitRecordWriter()
    /// Overflow frames this transaction's trees reference (garbage if it rolls back).
    var overflowFramesWritten: [(offset: UInt64, length: UInt64)] = []
    /// Shared with the trees and cursors made from this transaction.
    let lifetime = HandleLifetime()

    init(base: Version, log: LogWriter) {
        self.base = base
        self.transactionID = base.txid + 1
        self.log = log
        self.nextTreeID = base.nextTreeID
    }

    /// Names of every tree as this transaction sees them, sorted.
    /// Throws ``StrataError/transactionEnded(_:)`` or ``StrataError/transactionFailed(cause:)``.
    public var treeNames: [String] {
        get throws {
            try lifetime.check()
            var names = Set(base.trees.keys)
            names.subtract(droppedNames)
            for (name, _) in trees { names.insert(name) }
            return names.sorted()
        }
    }

    private func mutableTree(_ name: String) -> MutableTree? {
        if let tree = trees[name] { return tree }
        guard !droppedNames.contains(name), let committed = base.trees[name] else { return nil }
        let tree = MutableTree(id: committed.id, name: name, root: committed.root, count: committed.count,
                               txid: transactionID, file: base.file, reservesCache: true)
        trees[name] = tree
        return tree
    }

    /// The tree called `name`; created (empty) if it does not exist and `createIfMissing` is set.
    /// Returns `nil` when it does not exist and is not to be created.
    public func tree(_ name: String, createIfMissing: Bool = false) throws -> WriteTree? {
        try lifetime.check()
        if let tree = mutableTree(name) { return WriteTree(transaction: self, tree: tree) }
        guard createIfMissing else { return nil }
        return try createTree(name)
    }

    /// The tree called `name`, created (empty) if it does not exist: ``tree(_:createIfMissing:)``
    /// for a caller that always wants one. Throws what ``createTree(_:)`` throws for a name it
    /// refuses.
    public func treeCreatingIfMissing(_ name: String) throws -> WriteTree {
        try lifetime.check()
        if let tree = mutableTree(name) { return WriteTree(transaction: self, tree: tree) }
        return try createTree(name)
    }

    /// Creates an empty tree. Throws ``StrataError/treeExists(_:)`` if the name is taken,
    /// ``StrataError/invalidArgument(_:)`` for an empty name or one over
    /// ``StoreLimits/maxTreeNameLength`` UTF-8 bytes.
    @discardableResult
    public func createTree(_ name: String) throws -> WriteTree {
        try lifetime.check()
        let utf8 = name.utf8.count
        guard utf8 > 0, utf8 <= StoreLimits.maxTreeNameLength else {
            throw StrataError.invalidArgument("tree name must be 1...\(StoreLimits.maxTreeNameLength) UTF-8 bytes")
        }
        if mutableTree(name) != nil { throw StrataError.treeExists(name) }
        // Recovery accepts ids below 2^32 − 2 (FORMAT.md §5), so the next id always fits.
        guard nextTreeID < StoreLimits.treeIDLimit else {
            throw StrataError.limitExceeded(what: "tree ids", limit: UInt64(StoreLimits.treeIDLimit))
        }
        let id = nextTreeID
        nextTreeID += 1
        let tree = MutableTree(id: id, name: name, root: nil, count: 0, txid: transactionID, file: base.file,
                               reservesCache: true)
        trees[name] = tree
        record.createTree(id: id, name: name)
        return WriteTree(transaction: self, tree: tree)
    }

    /// Deletes a tree and everything in it. Throws ``StrataError/treeNotFound(_:)``; a page
    /// that cannot be read while the tree's space is accounted fails the call before anything
    /// changed.
    public func dropTree(_ name: String) throws {
        try lifetime.check()
        guard let tree = mutableTree(name) else { throw StrataError.treeNotFound(name) }
        try tree.dropAll()
        trees[name] = nil
        droppedNames.insert(name)
        droppedTrees.append(tree)
        record.dropTree(id: tree.id)
    }

    /// Discards every change and ends the transaction: the store is left as it was before it,
    /// and every later call on it (or its trees and cursors) throws
    /// ``StrataError/transactionEnded(_:)`` with `.rolledBack`. Allowed on a failed
    /// transaction; throws ``StrataError/transactionEnded(_:)`` if it had already ended.
    public func rollback() throws {
        switch lifetime.state {
        case .active, .failed: lifetime.end(.rolledBack)
        default: try lifetime.check()
        }
    }

    /// Whether `body`'s return should commit: not rolled back, not failed.
    var isRolledBack: Bool { lifetime.state == .rolledBack }

    /// Fails the transaction with `error` (the first cause wins) and returns what to throw.
    func fail(_ error: any Error) -> StrataError {
        lifetime.fail(error as? StrataError ?? .invalidArgument("\(error)"))
    }
}
