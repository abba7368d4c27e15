/// A snapshot: a consistent, read-only view of the store as of one commit.
///
/// It sees every transaction committed before it began and nothing after, from any thread,
/// without blocking the writer or other readers. While it lives it pins its commit's pages in
/// memory (and, across a compaction, the old file), so end long-lived snapshots with
/// ``close()``; `strata info` shows the oldest one still open. Its ``ReadTree``s and cursors
/// keep it alive.
///
/// **Lifetime.** After ``close()`` (or the end of the closure of ``Store/read(_:)``), every
/// throwing member of the snapshot and of the trees and cursors made from it throws
/// ``StrataError/transactionEnded(_:)`` with `.closed`.
public final class ReadTransaction: @unchecked Sendable {
    let version: Version
    private weak var store: Store?
    private let readerID: UInt64
    /// Shared with the trees and cursors made from this snapshot.
    let lifetime = HandleLifetime()

    init(version: Version, store: Store, readerID: UInt64) {
        self.version = version
        self.store = store
        self.readerID = readerID
    }

    deinit { store?.unregisterReader(readerID) }

    /// The id of the last transaction this snapshot includes. Readable at any time.
    public var transactionID: UInt64 { version.txid }

    /// The names of every tree, sorted.
    public var treeNames: [String] {
        get throws {
            try lifetime.check()
            return version.trees.keys.sorted()
        }
    }

    /// The tree called `name`, or `nil` if there is none.
    public func tree(_ name: String) throws -> ReadTree? {
        try lifetime.check()
        guard let tree = version.trees[name] else { return nil }
        return ReadTree(name: name, root: tree.root, count: tree.count, file: version.file, transaction: self)
    }

    /// Ends the snapshot early (it also ends when the last reference to it, its trees and its
    /// cursors goes away). Closing it again does nothing.
    public func close() {
        lifetime.end(.closed)
        store?.unregisterReader(readerID)
    }
}
