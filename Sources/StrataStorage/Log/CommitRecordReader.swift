/// Decodes the payload of a commit frame (FORMAT.md, "Commit frame") into
/// ``CommitOperation``s; recovery replays them.
enum CommitRecordReader {
    /// Calls `body` for each operation in order. Throws `corrupt` on a malformed record
    /// (which, since its checksum matched, means a bug or a forged frame): an unknown operation,
    /// a tree id above 2^32 − 1, a key outside 1...1024 bytes, a value above 64 MiB, a tree name
    /// that is not 1...255 bytes of valid UTF-8, or bytes missing at the end. The semantic
    /// checks (unknown trees, a create of a tree that exists, the inline and overflow rules)
    /// are replay's (``Recovery/apply(_:at:to:file:)``).
    static func forEach(_ payload: UnsafeRawBufferPointer, fileOffset: UInt64,
                        _ body: (CommitOperation) throws -> Void) throws {
        var reader = ByteReader(payload, fileOffset: fileOffset, context: "commit record")
        while !reader.isAtEnd {
            let op = try reader.u8()
            switch op {
            case Format.opPut, Format.opPutOverflow, Format.opDelete:
                let tree = try reader.u32Varint("tree id")
                let keyLength = try reader.length(max: StoreLimits.maxKeyLength)
                guard keyLength > 0 else { throw reader.fail("empty key") }
                let key = try reader.bytes(keyLength)
                if op == Format.opDelete {
                    try body(.delete(tree: tree, key: key))
                } else if op == Format.opPut {
                    let valueLength = try reader.length(max: StoreLimits.maxValueLength)
                    try body(.put(tree: tree, key: key, value: try reader.bytes(valueLength)))
                } else {
                    let valueLength = try reader.length(max: StoreLimits.maxValueLength)
                    try body(.putOverflow(tree: tree, key: key, length: valueLength, frame: try reader.u64()))
                }
            case Format.opCreateTree:
                let id = try reader.u32Varint("tree id")
                let name = try reader.treeName(length: try reader.length(max: StoreLimits.maxTreeNameLength))
                try body(.createTree(id: id, name: name))
            case Format.opDropTree:
                try body(.dropTree(id: try reader.u32Varint("tree id")))
            default:
                throw reader.fail("unknown operation \(op)")
            }
        }
    }
}

/// One operation of a commit record, decoded by ``CommitRecordReader``. Byte strings borrow
/// the record's buffer.
enum CommitOperation {
    case put(tree: UInt32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)
    case putOverflow(tree: UInt32, key: UnsafeRawBufferPointer, length: Int, frame: UInt64)
    case delete(tree: UInt32, key: UnsafeRawBufferPointer)
    case createTree(id: UInt32, name: String)
    case dropTree(id: UInt32)
}
