/// A snapshot: a consistent, read-only view of the store as of one commit.
///
/// It sees every transaction committed before it began and nothing after, from any thread,
/// without blocking the writer or other readers. While it lives it pins its commit's pages in
/// memory (and, across a compaction, the old file), so end long-lived snapshots with
/// ``close()``; `strata info` shows the oldest one still open.
public final class ReadTransaction: @unchecked Sendable {
    let version: Version
    private weak var store: Store?
    private let readerID: UInt64

    init(version: Version, store: Store, readerID: UInt64) {
        self.version = version
        self.store = store
        self.readerID = readerID
    }

    deinit { store?.unregisterReader(readerID) }

    /// The id of the last transaction this snapshot includes.
    public var transactionID: UInt64 { version.txid }

    /// The names of every tree, sorted.
    public var treeNames: [String] { version.trees.keys.sorted() }

    /// The tree called `name`, or `nil` if there is none.
    public func tree(_ name: String) throws -> ReadTree? {
        guard let t = version.trees[name] else { return nil }
        return ReadTree(name: name, root: t.root, count: t.count, file: version.file)
    }

    /// Ends the snapshot early (it also ends when the last reference goes away).
    public func close() { store?.unregisterReader(readerID) }
}

/// One tree as a snapshot sees it. Valid while its ``ReadTransaction`` is.
public struct ReadTree: @unchecked Sendable {
    /// The tree's name.
    public let name: String
    let root: Page?
    /// Number of entries.
    public let count: Int
    let file: PageFile

    init(name: String, root: Page?, count: UInt64, file: PageFile) {
        self.name = name
        self.root = root
        self.count = Int(count)
        self.file = file
    }

    /// A copy of the value stored under `key`, or `nil`.
    public func get(_ key: [UInt8]) throws -> [UInt8]? {
        try key.withUnsafeBytes { k in
            guard let root, !k.isEmpty else { return nil }
            let (leaf, i, found) = try TreeRead.find(root, k, file)
            return found ? try TreeRead.value(leaf, i, file) : nil
        }
    }

    /// Calls `body` with the value stored under `key`, borrowed without copying (valid only
    /// inside `body`), and returns its result; `nil` if the key is absent.
    @inlinable
    public func withValue<R>(forKey key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try key.withUnsafeBytes { try withValue(forKey: $0, body) }
    }

    /// Calls `body` with the value stored under `key`, borrowed without copying (valid only inside
    /// `body`), and returns its result; `nil` if the key is absent.
    public func withValue<R>(forKey key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        guard let root, !key.isEmpty else { return nil }
        let (leaf, i, found) = try TreeRead.find(root, key, file)
        guard found else { return nil }
        if leaf.valueInfo(i).isOverflow {
            let value = try TreeRead.value(leaf, i, file)
            return try value.withUnsafeBytes(body)
        }
        return try body(leaf.valueBytes(i))
    }

    /// Whether `key` is present.
    public func contains(_ key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { k in
            guard let root, !k.isEmpty else { return false }
            return try TreeRead.find(root, k, file).found
        }
    }

    /// A cursor over this tree, unpositioned.
    public func makeCursor() -> Cursor { Cursor(root: root, file: file) }

    /// Every entry with `lower ≤ key < upper` (either bound optional), in order or reversed.
    public func entries(from lower: [UInt8]? = nil, to upper: [UInt8]? = nil, reverse: Bool = false) throws -> [(key: [UInt8], value: [UInt8])] {
        try collectRange(makeCursor(), lower: lower, upper: upper, reverse: reverse)
    }
}

/// Shared by read and write trees: a bounded range scan.
func collectRange(_ c: Cursor, lower: [UInt8]?, upper: [UInt8]?, reverse: Bool) throws -> [(key: [UInt8], value: [UInt8])] {
    var out: [(key: [UInt8], value: [UInt8])] = []
    if !reverse {
        var ok = try lower.map { try c.seek($0) } ?? c.first()
        while ok {
            if let upper, upper.withUnsafeBytes({ compareKeys(c.key, $0) }) >= 0 { break }
            out.append((c.copyKey(), try c.copyValue()))
            ok = try c.next()
        }
    } else {
        var ok: Bool
        if let upper {
            // Last key < upper.
            ok = try c.seek(upper) ? try c.previous() : try c.last()
        } else {
            ok = try c.last()
        }
        while ok {
            if let lower, lower.withUnsafeBytes({ compareKeys(c.key, $0) }) < 0 { break }
            out.append((c.copyKey(), try c.copyValue()))
            ok = try c.previous()
        }
    }
    return out
}
