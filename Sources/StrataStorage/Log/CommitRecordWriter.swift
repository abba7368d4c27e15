/// The logical changes of one transaction: the payload of a commit frame (FORMAT.md,
/// "Commit frame"). Built while the transaction runs; replayed by recovery.
struct CommitRecordWriter {
    private(set) var writer = ByteWriter(capacity: 4096)

    var isEmpty: Bool { writer.count == 0 }
    var bytes: [UInt8] { writer.bytes }

    mutating func put(tree: UInt32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        writer.u8(Format.opPut)
        writer.varint(UInt64(tree))
        writer.varint(UInt64(key.count))
        writer.append(key)
        writer.varint(UInt64(value.count))
        writer.append(value)
    }

    mutating func putOverflow(tree: UInt32, key: UnsafeRawBufferPointer, length: Int, frame: UInt64) {
        writer.u8(Format.opPutOverflow)
        writer.varint(UInt64(tree))
        writer.varint(UInt64(key.count))
        writer.append(key)
        writer.varint(UInt64(length))
        writer.u64(frame)
    }

    mutating func delete(tree: UInt32, key: UnsafeRawBufferPointer) {
        writer.u8(Format.opDelete)
        writer.varint(UInt64(tree))
        writer.varint(UInt64(key.count))
        writer.append(key)
    }

    mutating func createTree(id: UInt32, name: String) {
        writer.u8(Format.opCreateTree)
        writer.varint(UInt64(id))
        let utf8 = Array(name.utf8)
        writer.varint(UInt64(utf8.count))
        writer.append(utf8)
    }

    mutating func dropTree(id: UInt32) {
        writer.u8(Format.opDropTree)
        writer.varint(UInt64(id))
    }
}
