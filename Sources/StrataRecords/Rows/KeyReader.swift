import StrataStorage

/// Reads the parts of a key that came from a record tree (FORMAT.md §12): primary keys and
/// encoded key values, front to back.
///
/// Every read is bounds-checked and throws `StrataError.corrupt` naming the tree instead of
/// reading past the key or trapping: a key comes from the file, and a damaged or forged file
/// may hold one that is too short or malformed. The fetch path decodes row, index, inverse
/// and join keys only through this type. It borrows `bytes`, so it must not outlive them
/// (a cursor's key lives until the cursor moves).
struct KeyReader {
    let bytes: UnsafeRawBufferPointer
    /// The tree the key was read from, for the error message.
    let tree: String
    private(set) var position = 0

    init(_ bytes: UnsafeRawBufferPointer, tree: String) {
        self.bytes = bytes
        self.tree = tree
    }

    var remaining: Int { bytes.count - position }

    func corrupt(_ what: String) -> StrataError {
        .corrupt("\(tree): a key of \(bytes.count) bytes \(what)", offset: nil)
    }

    private mutating func byte() throws -> UInt8 {
        guard position < bytes.count else { throw corrupt("ends inside a value") }
        defer { position += 1 }
        return bytes[position]
    }

    private mutating func skip(_ n: Int) throws {
        guard n <= remaining else { throw corrupt("ends inside a value") }
        position += n
    }

    /// The 8-byte big-endian primary key at the read position.
    mutating func primaryKey() throws -> UInt64 {
        guard remaining >= 8 else { throw corrupt("has no primary key at byte \(position)") }
        let pk = bytes.loadBigEndianUInt64(at: position)
        position += 8
        return pk
    }

    /// Skips one encoded value of an attribute of `type` and tells whether it was cut (a
    /// string or binary longer than the key keeps, ended by `00 02`).
    mutating func skipValue(_ type: AttributeType) throws -> Bool {
        let tag = try byte()
        if tag == KeyEncoding.tagNull { return false }
        guard tag == KeyEncoding.tagValue else { throw corrupt("has an unknown value tag \(tag)") }
        switch type {
        case .bool: try skip(1)
        case .int16, .int32, .int64, .double, .date: try skip(8)
        case .uuid: try skip(16)
        case .string, .binary:
            while true {
                guard try byte() == 0 else { continue }
                switch try byte() {
                case 0xFF: continue                       // an escaped 00
                case KeyEncoding.endWhole: return false
                case KeyEncoding.endCut: return true
                case let marker: throw corrupt("has \(marker) after a 00 in a string")
                }
            }
        case .decimal:
            let sign = try byte()
            if sign == 1 { return false }                // zero
            guard sign == 0 || sign == 2 else { throw corrupt("has a decimal sign byte \(sign)") }
            try skip(2)
            let end: UInt8 = sign == 2 ? 0 : 0xFF
            while try byte() != end {}
        }
        return false
    }

    /// The primary key that ends an index key, after at least one byte of values.
    static func trailingPrimaryKey(_ key: UnsafeRawBufferPointer, tree: String) throws -> UInt64 {
        guard key.count >= 9 else {
            throw StrataError.corrupt("\(tree): a key of \(key.count) bytes has no room for a value and a primary key",
                                      offset: nil)
        }
        var reader = KeyReader(key, tree: tree)
        reader.position = key.count - 8
        return try reader.primaryKey()
    }

    /// The key of a rows tree: exactly one 8-byte primary key.
    static func rowKey(_ key: UnsafeRawBufferPointer, tree: String) throws -> UInt64 {
        guard key.count == 8 else {
            throw StrataError.corrupt("\(tree): a row key of \(key.count) bytes (a primary key has 8)", offset: nil)
        }
        var reader = KeyReader(key, tree: tree)
        return try reader.primaryKey()
    }
}
