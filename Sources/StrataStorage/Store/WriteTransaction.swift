/// The one write transaction of the moment: it sees its own changes, and commits all of them
/// atomically when the closure passed to ``Store/write(_:)`` returns (or none, if it throws or
/// calls ``rollback()``).
///
/// Not thread-safe: use it only inside its closure, on that thread.
public final class WriteTransaction {
    let base: Version
    /// This transaction's id: one more than the last committed.
    public let transactionID: UInt64
    unowned let store: Store
    let log: LogWriter
    var trees: [String: MutableTree] = [:]
    var droppedTrees: [String: MutableTree] = [:]
    var nextTreeID: UInt32
    var record = CommitRecordWriter()
    /// Overflow frames this transaction wrote (garbage if it rolls back).
    var overflowFramesWritten: [(offset: UInt64, length: UInt64)] = []
    private(set) var isRolledBack = false

    init(base: Version, store: Store, log: LogWriter) {
        self.base = base
        self.transactionID = base.txid + 1
        self.store = store
        self.log = log
        self.nextTreeID = base.nextTreeID
    }

    /// Names of every tree as this transaction sees them, sorted.
    public var treeNames: [String] {
        var names = Set(base.trees.keys)
        for (name, _) in droppedTrees { names.remove(name) }
        for (name, _) in trees { names.insert(name) }
        return names.sorted()
    }

    private func mutableTree(_ name: String) -> MutableTree? {
        if let t = trees[name] { return t }
        guard droppedTrees[name] == nil, let t = base.trees[name] else { return nil }
        let m = MutableTree(id: t.id, name: name, root: t.root, count: t.count, txid: transactionID, file: base.file)
        trees[name] = m
        return m
    }

    /// The tree called `name`; created (empty) if it does not exist and `createIfMissing` is set.
    /// Returns `nil` when it does not exist and is not to be created.
    public func tree(_ name: String, createIfMissing: Bool = false) throws -> WriteTree? {
        try checkActive()
        if let t = mutableTree(name) { return WriteTree(transaction: self, tree: t) }
        guard createIfMissing else { return nil }
        return try createTree(name)
    }

    /// Creates an empty tree. Throws ``StrataError/treeExists(_:)`` if the name is taken.
    @discardableResult
    public func createTree(_ name: String) throws -> WriteTree {
        try checkActive()
        let utf8 = name.utf8.count
        guard utf8 > 0, utf8 <= StoreLimits.maxTreeNameLength else {
            throw StrataError.invalidArgument("tree name must be 1...\(StoreLimits.maxTreeNameLength) UTF-8 bytes")
        }
        if mutableTree(name) != nil { throw StrataError.treeExists(name) }
        let id = nextTreeID
        nextTreeID += 1
        let m = MutableTree(id: id, name: name, root: nil, count: 0, txid: transactionID, file: base.file)
        trees[name] = m
        record.createTree(id: id, name: name)
        return WriteTree(transaction: self, tree: m)
    }

    /// Deletes a tree and everything in it. Throws ``StrataError/treeNotFound(_:)``.
    public func dropTree(_ name: String) throws {
        try checkActive()
        guard let m = mutableTree(name) else { throw StrataError.treeNotFound(name) }
        try m.dropAll()
        trees[name] = nil
        droppedTrees[name] = m
        record.dropTree(id: m.id)
    }

    /// Discards every change; the store is left as it was before the transaction.
    public func rollback() { isRolledBack = true }

    func checkActive() throws {
        if isRolledBack { throw StrataError.closed("rolled-back write transaction") }
    }
}

/// One tree inside a write transaction. Valid only while the transaction is.
public struct WriteTree {
    let transaction: WriteTransaction
    let tree: MutableTree

    /// The tree's name.
    public var name: String { tree.name }
    /// Number of entries, including this transaction's changes.
    public var count: Int { Int(tree.count) }

    /// Stores `value` under `key`, replacing any value there.
    /// Keys are 1...1024 bytes; values up to 64 MiB (large ones go to overflow frames).
    public func put(_ key: [UInt8], _ value: [UInt8]) throws {
        try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try put(k, v) } }
    }

    /// Stores `value` under `key`, replacing any value there; both are copied.
    /// Throws `keyTooLarge` or `valueTooLarge` outside 1...1024-byte keys and 64 MiB values.
    public func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws {
        let tx = transaction
        try tx.checkActive()
        guard !key.isEmpty, key.count <= StoreLimits.maxKeyLength else {
            throw StrataError.keyTooLarge(length: key.count, limit: StoreLimits.maxKeyLength)
        }
        guard value.count <= StoreLimits.maxValueLength else {
            throw StrataError.valueTooLarge(length: value.count, limit: StoreLimits.maxValueLength)
        }
        let replaced: UInt64?
        if Format.leafCellHeader + key.count + value.count <= tree.inlineCellLimit {
            replaced = try tree.put(key, value, overflowLength: nil)
            tx.record.put(tree: tree.id, key: key, value: value)
        } else {
            let (offset, length) = try tx.log.append(.overflow, txid: tx.transactionID, payload: value, compress: true)
            tx.overflowFramesWritten.append((offset, length))
            var ref = offset.littleEndian
            replaced = try withUnsafeBytes(of: &ref) { try tree.put(key, $0, overflowLength: value.count) }
            tx.record.putOverflow(tree: tree.id, key: key, length: value.count, frame: offset)
        }
        if let replaced { tree.freedOverflow.append(replaced) }
    }

    /// Removes `key`; returns whether it was there.
    @discardableResult
    public func delete(_ key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { try delete($0) }
    }

    /// Removes `key`; returns whether it was there. An empty or over-long key is simply absent.
    @discardableResult
    public func delete(_ key: UnsafeRawBufferPointer) throws -> Bool {
        try transaction.checkActive()
        guard !key.isEmpty, key.count <= StoreLimits.maxKeyLength else { return false }
        let (found, overflow) = try tree.delete(key)
        guard found else { return false }
        if let overflow { tree.freedOverflow.append(overflow) }
        transaction.record.delete(tree: tree.id, key: key)
        return true
    }

    /// A copy of the value under `key` as this transaction sees it, or `nil`.
    public func get(_ key: [UInt8]) throws -> [UInt8]? {
        try key.withUnsafeBytes { k in
            guard let root = tree.root, !k.isEmpty else { return nil }
            let (leaf, i, found) = try TreeRead.find(root, k, tree.file)
            return found ? try TreeRead.value(leaf, i, tree.file) : nil
        }
    }

    /// Whether `key` has a value, as this transaction sees it.
    public func contains(_ key: [UInt8]) throws -> Bool { try get(key) != nil }

    /// A cursor over the tree as it is now; any later write to this tree invalidates it.
    public func makeCursor() -> Cursor { Cursor(root: tree.root, file: tree.file) }

    /// Every entry with `lower ≤ key < upper`, in order or reversed.
    public func entries(from lower: [UInt8]? = nil, to upper: [UInt8]? = nil, reverse: Bool = false) throws -> [(key: [UInt8], value: [UInt8])] {
        try collectRange(makeCursor(), lower: lower, upper: upper, reverse: reverse)
    }
}
