/// One operation of a commit record, decoded by ``CommitRecordReader``. Byte strings borrow
/// the record's buffer.
enum CommitOperation {
    case put(tree: UInt32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)
    case putOverflow(tree: UInt32, key: UnsafeRawBufferPointer, length: Int, frame: UInt64)
    case delete(tree: UInt32, key: UnsafeRawBufferPointer)
    case createTree(id: UInt32, name: String)
    case dropTree(id: UInt32)
}
