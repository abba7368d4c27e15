/// One tree inside a write transaction. Valid only while the transaction is: afterwards every
/// throwing member throws ``StrataError/transactionEnded(_:)`` (see ``WriteTransaction``).
public struct WriteTree {
    let transaction: WriteTransaction
    let tree: MutableTree

    /// The tree's name (readable at any time: it reads nothing of the tree).
    public var name: String { tree.name }

    /// Number of entries, including this transaction's changes.
    public var count: Int {
        get throws {
            try transaction.lifetime.check()
            return Int(tree.count)
        }
    }

    /// Stores `value` under `key`, replacing any value there.
    /// Keys are 1...1024 bytes; values up to 64 MiB (large ones go to overflow frames).
    public func put(_ key: [UInt8], _ value: [UInt8]) throws {
        try key.withUnsafeBytes { keyBytes in
            try value.withUnsafeBytes { valueBytes in try put(keyBytes, valueBytes) }
        }
    }

    /// Stores `value` under `key`, replacing any value there; both are copied.
    /// Throws `keyTooLarge` or `valueTooLarge` outside 1...1024-byte keys and 64 MiB values;
    /// `diskFull` or `ioFailure` if an overflow value cannot be written, and a read error if a
    /// page on the way down cannot be read (all before anything changed);
    /// ``StrataError/transactionFailed(cause:)`` if it failed after the tree began to change.
    public func put(_ key: RawSpan, _ value: RawSpan) throws {
        try key.withUnsafeBytes { keyBytes in try value.withUnsafeBytes { try put(keyBytes, $0) } }
    }

    /// The pointer form of ``put(_:_:)-(RawSpan,RawSpan)`` for the layers of this package, which
    /// encode keys and rows into raw buffers (decision 59); same rules and errors.
    package func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws {
        let tx = transaction
        try tx.lifetime.check()
        guard !key.isEmpty, key.count <= StoreLimits.maxKeyLength else {
            throw StrataError.keyTooLarge(length: key.count, limit: StoreLimits.maxKeyLength)
        }
        guard value.count <= StoreLimits.maxValueLength else {
            throw StrataError.valueTooLarge(length: value.count, limit: StoreLimits.maxValueLength)
        }
        let tree = self.tree
        let before = tree.modifications
        do {
            let replaced: UInt64?
            if Format.leafCellHeader + key.count + value.count <= tree.inlineCellLimit {
                replaced = try tree.put(key, value, overflowLength: nil)
                tx.record.put(tree: tree.id, key: key, value: value)
            } else {
                // If the descent below fails, the frame is unreferenced garbage: it is counted
                // only once the tree points at it.
                let frame = try tx.log.append(.overflow, txid: tx.transactionID, payload: value, compress: true)
                var reference = frame.offset.littleEndian
                replaced = try withUnsafeBytes(of: &reference) { try tree.put(key, $0, overflowLength: value.count) }
                tx.overflowFramesWritten.append(frame)
                tx.record.putOverflow(tree: tree.id, key: key, length: value.count, frame: frame.offset)
            }
            if let replaced { tree.freedOverflow.append(replaced) }
        } catch {
            if tree.modifications != before { throw tx.fail(error) }
            throw error
        }
    }

    /// Stores `value` under the key of the entry `cursor` rests on (a cursor of this tree): a
    /// put of that key that reuses the cursor's descent when the value fits where the entry is,
    /// and leaves the cursor on the entry (LMDB's `MDB_CURRENT`); otherwise an ordinary put,
    /// after which the cursor must be positioned again. A run of changes in key order through
    /// one cursor then searches each leaf once, not once per key (decision 90). Same rules and
    /// errors as ``put(_:_:)-(RawSpan,RawSpan)``; `invalidArgument` when the cursor is not on
    /// an entry of this tree.
    package func replaceValue(at cursor: Cursor, with value: UnsafeRawBufferPointer) throws {
        let tx = transaction
        try tx.lifetime.check()
        guard cursor.walks(tree), cursor.isValid else {
            throw StrataError.invalidArgument("replaceValue(at:with:) needs a cursor of tree '\(tree.name)' resting on an entry")
        }
        guard value.count <= StoreLimits.maxValueLength else {
            throw StrataError.valueTooLarge(length: value.count, limit: StoreLimits.maxValueLength)
        }
        let tree = self.tree
        if Format.leafCellHeader + cursor.key.count + value.count <= tree.inlineCellLimit, !cursor.isOverflow {
            let before = tree.modifications
            do {
                if try cursor.replaceValueInPlace(value) {
                    // The cursor rests on the entry, its key in the leaf.
                    tx.record.put(tree: tree.id, key: cursor.key, value: value)
                    return
                }
            } catch {
                if tree.modifications != before { throw tx.fail(error) }
                throw error
            }
        }
        // A copy of the key: the put changes the leaf it lies in.
        try cursor.copyKey().withUnsafeBytes { try put($0, value) }
    }

    /// Removes `key`; returns whether it was there.
    @discardableResult
    public func delete(_ key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { try delete($0) }
    }

    /// Removes `key`; returns whether it was there. An empty or over-long key is simply absent.
    /// A page that cannot be read while looking for the key fails the call before anything
    /// changed; one that cannot be read while merging pages after the removal fails the
    /// transaction (``StrataError/transactionFailed(cause:)``).
    @discardableResult
    public func delete(_ key: RawSpan) throws -> Bool {
        try key.withUnsafeBytes { try delete($0) }
    }

    /// The pointer form of ``delete(_:)-(RawSpan)`` for the layers of this package (decision 59).
    @discardableResult
    package func delete(_ key: UnsafeRawBufferPointer) throws -> Bool {
        let tx = transaction
        try tx.lifetime.check()
        guard !key.isEmpty, key.count <= StoreLimits.maxKeyLength else { return false }
        let tree = self.tree
        let before = tree.modifications
        do {
            let (found, overflow) = try tree.delete(key)
            guard found else { return false }
            if let overflow { tree.freedOverflow.append(overflow) }
            tx.record.delete(tree: tree.id, key: key)
            return true
        } catch {
            if tree.modifications != before { throw tx.fail(error) }
            throw error
        }
    }

    /// A copy of the value under `key` as this transaction sees it, or `nil`.
    public func get(_ key: [UInt8]) throws -> [UInt8]? {
        try transaction.lifetime.check()
        return try key.withUnsafeBytes { keyBytes in
            guard let root = tree.root, !keyBytes.isEmpty else { return nil }
            let (leaf, i, found) = try TreeRead.find(root, keyBytes, tree.file)
            return found ? try TreeRead.value(leaf, i, tree.file) : nil
        }
    }

    /// Calls `body` with the value under `key` as this transaction sees it, borrowed without
    /// copying (valid only inside `body`, which must not change this tree: the bytes are the
    /// page's own), and returns its result; `nil` if the key is absent.
    @inlinable
    public func withValue<R>(forKey key: [UInt8], _ body: (RawSpan) throws -> R) throws -> R? {
        try key.withUnsafeBytes { keyBytes in try withValueBytes(forKey: keyBytes) { try body($0.bytes) } }
    }

    /// Calls `body` with the value under `key` as this transaction sees it, borrowed without
    /// copying (the span cannot leave `body`, which must not change this tree), and returns its
    /// result; `nil` if the key is absent.
    @inlinable
    public func withValue<R>(forKey key: RawSpan, _ body: (RawSpan) throws -> R) throws -> R? {
        try key.withUnsafeBytes { keyBytes in try withValueBytes(forKey: keyBytes) { try body($0.bytes) } }
    }

    /// The pointer form of ``withValue(forKey:_:)-(RawSpan,_)`` for the record layer, whose row
    /// decoder reads raw buffers: the bytes are valid only inside `body` (decision 59).
    @usableFromInline
    package func withValueBytes<R>(forKey key: UnsafeRawBufferPointer,
                                   _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try transaction.lifetime.check()
        guard let root = tree.root, !key.isEmpty else { return nil }
        let (leaf, i, found) = try TreeRead.find(root, key, tree.file)
        guard found else { return nil }
        if leaf.valueInfo(i).isOverflow {
            let value = try TreeRead.value(leaf, i, tree.file)
            return try value.withUnsafeBytes(body)
        }
        return try body(leaf.valueBytes(i))
    }

    /// Whether `key` has a value, as this transaction sees it.
    public func contains(_ key: [UInt8]) throws -> Bool { try get(key) != nil }

    /// A cursor over the tree, unpositioned. Positioning it reads the tree as it is then; a
    /// later put, delete or drop in this tree makes `next()`, `previous()` and `copyValue()`
    /// throw ``StrataError/cursorInvalidated`` until it is positioned again. Made after the
    /// transaction ended, every method of the cursor throws.
    public func makeCursor() -> Cursor { Cursor(writeTree: tree, lifetime: transaction.lifetime, owner: transaction) }

    /// Every entry with `lower ≤ key < upper`, in order or reversed.
    public func entries(from lower: [UInt8]? = nil, to upper: [UInt8]? = nil,
                        reverse: Bool = false) throws -> [(key: [UInt8], value: [UInt8])] {
        try transaction.lifetime.check()
        return try collectRange(makeCursor(), lower: lower, upper: upper, reverse: reverse)
    }
}
