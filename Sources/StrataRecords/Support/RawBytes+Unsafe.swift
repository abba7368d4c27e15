/// Raw access for the record layer: 64-bit integers read in place from bytes the storage engine
/// lends (primary keys inside index keys, history tokens, a row's fixed-width fields), and a
/// row's bytes appended to a buffer in one copy, and two keys' bytes side by side on the stack.
///
/// Invariants: every load reads 8 bytes at `offset` only when `offset ≥ 0` and
/// `offset + 8 ≤ count`, checked here in every build; the callers check the same bounds first
/// and turn a short key or row from the file into `StrataError.corrupt`, so the check here only
/// catches a caller's mistake (and traps, naming the bounds). No alignment is assumed
/// (`loadUnaligned`). The buffers are lent by their callers for the call and never kept.
extension UnsafeRawBufferPointer {
    /// The big-endian `UInt64` at `offset`, which must lie wholly inside the buffer.
    @inline(__always)
    func loadBigEndianUInt64(at offset: Int = 0) -> UInt64 {
        precondition(offset >= 0 && offset <= count - 8, "8 bytes at \(offset) of \(count)")
        return UInt64(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The little-endian `UInt64` at `offset`, which must lie wholly inside the buffer.
    @inline(__always)
    func loadLittleEndianUInt64(at offset: Int = 0) -> UInt64 {
        precondition(offset >= 0 && offset <= count - 8, "8 bytes at \(offset) of \(count)")
        return UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}

extension [UInt8] {
    /// Appends `bytes` in one copy (a raw buffer appended as a sequence goes byte by byte).
    @inline(__always)
    mutating func append(raw bytes: UnsafeRawBufferPointer) {
        bytes.withMemoryRebound(to: UInt8.self) { append(contentsOf: $0) }
    }
}

extension RecordTrees {
    /// Calls `body` with the 16 bytes of ``pair(_:_:)`` in a buffer on the stack, so the write
    /// path's inverse entries allocate nothing. The buffer is 16 bytes: the first key fills
    /// bytes 0..<8, the second 8..<16; `body` must not keep it.
    @inline(__always)
    static func withPair<R>(_ first: UInt64, _ second: UInt64,
                            _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: 16, alignment: 8) { key in
            key.storeBytes(of: first.bigEndian, toByteOffset: 0, as: UInt64.self)
            key.storeBytes(of: second.bigEndian, toByteOffset: 8, as: UInt64.self)
            return try body(UnsafeRawBufferPointer(key))
        }
    }
}
