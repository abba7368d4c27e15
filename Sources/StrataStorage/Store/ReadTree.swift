/// One tree as a snapshot sees it. Valid while its ``ReadTransaction`` is: afterwards every
/// throwing member throws ``StrataError/transactionEnded(_:)``.
public struct ReadTree: @unchecked Sendable {
    /// The tree's name (readable at any time).
    public let name: String
    let root: Page?
    let entryCount: Int
    let file: PageFile
    let transaction: ReadTransaction

    init(name: String, root: Page?, count: UInt64, file: PageFile, transaction: ReadTransaction) {
        self.name = name
        self.root = root
        // A catalog count beyond Int is damage; the check and cursors find the real entries.
        self.entryCount = Int(clamping: count)
        self.file = file
        self.transaction = transaction
    }

    /// Number of entries.
    public var count: Int {
        get throws {
            try transaction.lifetime.check()
            return entryCount
        }
    }

    /// A copy of the value stored under `key`, or `nil`.
    public func get(_ key: [UInt8]) throws -> [UInt8]? {
        try transaction.lifetime.check()
        return try key.withUnsafeBytes { keyBytes in
            guard let root, !keyBytes.isEmpty else { return nil }
            let (leaf, i, found) = try TreeRead.find(root, keyBytes, file)
            return found ? try TreeRead.value(leaf, i, file) : nil
        }
    }

    /// Calls `body` with the value stored under `key`, borrowed without copying (the span cannot
    /// leave `body`), and returns its result; `nil` if the key is absent.
    @inlinable
    public func withValue<R>(forKey key: [UInt8], _ body: (RawSpan) throws -> R) throws -> R? {
        try key.withUnsafeBytes { keyBytes in try withValueBytes(forKey: keyBytes) { try body($0.bytes) } }
    }

    /// Calls `body` with the value stored under `key`, borrowed without copying (the span cannot
    /// leave `body`), and returns its result; `nil` if the key is absent.
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
        try transaction.lifetime.check()
        return try key.withUnsafeBytes { keyBytes in
            guard let root, !keyBytes.isEmpty else { return false }
            return try TreeRead.find(root, keyBytes, file).found
        }
    }

    /// A cursor over this tree, unpositioned. Made after the snapshot ended, every method of
    /// the cursor throws.
    public func makeCursor() -> Cursor {
        Cursor(root: root, file: file, lifetime: transaction.lifetime, owner: transaction)
    }

    /// Every entry with `lower ≤ key < upper` (either bound optional), in order or reversed.
    public func entries(from lower: [UInt8]? = nil, to upper: [UInt8]? = nil,
                        reverse: Bool = false) throws -> [(key: [UInt8], value: [UInt8])] {
        try transaction.lifetime.check()
        return try collectRange(makeCursor(), lower: lower, upper: upper, reverse: reverse)
    }
}

/// Shared by read and write trees: a bounded range scan.
func collectRange(_ cursor: Cursor, lower: [UInt8]?, upper: [UInt8]?,
                  reverse: Bool) throws -> [(key: [UInt8], value: [UInt8])] {
    var out: [(key: [UInt8], value: [UInt8])] = []
    if !reverse {
        var ok = try lower.map { try cursor.seek($0) } ?? cursor.first()
        while ok {
            if let upper, upper.withUnsafeBytes({ compareKeys(cursor.key, $0) }) >= 0 { break }
            out.append((cursor.copyKey(), try cursor.copyValue()))
            ok = try cursor.next()
        }
    } else {
        var ok: Bool
        if let upper {
            // Last key < upper.
            ok = try cursor.seek(upper) ? try cursor.previous() : try cursor.last()
        } else {
            ok = try cursor.last()
        }
        while ok {
            if let lower, lower.withUnsafeBytes({ compareKeys(cursor.key, $0) }) < 0 { break }
            out.append((cursor.copyKey(), try cursor.copyValue()))
            ok = try cursor.previous()
        }
    }
    return out
}
