/// Building cells (FORMAT.md §4): the one place that writes a cell's bytes, whether into a
/// page or into a caller's buffer (a cell that must be placed by a split).
///
/// ```
/// leaf cell:   | u16 key length | u32 value info | key | value (inline) or u64 overflow offset |
/// branch cell: | u16 key length | u64 child offset | key |
/// ```
/// Value info: bit 31 set = the value lives in an overflow frame, bits 0–30 = the value length.
extension Page {
    /// Bytes of a leaf cell whose key has `keyLength` bytes and whose value part has
    /// `valueLength` bytes (the inline value, or ``Format/overflowReferenceLength``).
    @inline(__always)
    static func leafCellSize(keyLength: Int, valueLength: Int) -> Int {
        Format.leafCellHeader + keyLength + valueLength
    }

    /// Bytes of a branch cell whose key has `keyLength` bytes.
    @inline(__always)
    static func branchCellSize(keyLength: Int) -> Int { Format.branchCellHeader + keyLength }

    /// Writes a leaf cell at `p`, which must have ``leafCellSize(keyLength:valueLength:)`` bytes.
    /// `value` is the inline value, or (with `overflowLength` set to the value's length) the
    /// 8-byte little-endian offset of the overflow frame holding it.
    @inline(__always)
    static func writeLeafCell(at p: UnsafeMutableRawPointer, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
                              overflowLength: Int?) {
        p.storeBytes(of: UInt16(key.count).littleEndian, toByteOffset: 0, as: UInt16.self)
        let info: UInt32 = overflowLength.map { UInt32($0) | Format.overflowBit } ?? UInt32(value.count)
        p.storeBytes(of: info.littleEndian, toByteOffset: 2, as: UInt32.self)
        if let k = key.baseAddress { (p + Format.leafCellHeader).copyMemory(from: k, byteCount: key.count) }
        if let v = value.baseAddress { (p + Format.leafCellHeader + key.count).copyMemory(from: v, byteCount: value.count) }
    }

    /// Writes a branch cell at `p`, which must have ``branchCellSize(keyLength:)`` bytes.
    /// `childAddress` is 0 for a child held in memory (not yet written by a checkpoint).
    @inline(__always)
    static func writeBranchCell(at p: UnsafeMutableRawPointer, key: UnsafeRawBufferPointer, childAddress: UInt64) {
        p.storeBytes(of: UInt16(key.count).littleEndian, toByteOffset: 0, as: UInt16.self)
        p.storeBytes(of: childAddress.littleEndian, toByteOffset: 2, as: UInt64.self)
        if let k = key.baseAddress { (p + Format.branchCellHeader).copyMemory(from: k, byteCount: key.count) }
    }

    /// Builds a leaf cell in temporary memory and calls `body` with it and its size; the cell
    /// lives only during the call.
    static func withLeafCell<R>(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, overflowLength: Int?,
                                _ body: (UnsafeRawPointer, Int) throws -> R) rethrows -> R {
        let size = leafCellSize(keyLength: key.count, valueLength: value.count)
        return try withUnsafeTemporaryAllocation(byteCount: size, alignment: 8) { cell in
            writeLeafCell(at: cell.baseAddress!, key: key, value: value, overflowLength: overflowLength)
            return try body(UnsafeRawPointer(cell.baseAddress!), size)
        }
    }

    /// Builds a branch cell in temporary memory and calls `body` with it and its size; the cell
    /// lives only during the call.
    static func withBranchCell<R>(key: UnsafeRawBufferPointer, childAddress: UInt64,
                                  _ body: (UnsafeRawPointer, Int) throws -> R) rethrows -> R {
        let size = branchCellSize(keyLength: key.count)
        return try withUnsafeTemporaryAllocation(byteCount: size, alignment: 8) { cell in
            writeBranchCell(at: cell.baseAddress!, key: key, childAddress: childAddress)
            return try body(UnsafeRawPointer(cell.baseAddress!), size)
        }
    }

    /// The key of a cell built by ``withLeafCell(key:value:overflowLength:_:)`` or
    /// ``withBranchCell(key:childAddress:_:)``; borrowed from `cell`.
    @inline(__always)
    static func cellKey(_ cell: UnsafeRawPointer, isLeaf: Bool) -> UnsafeRawBufferPointer {
        let k = Int(UInt16(littleEndian: cell.loadUnaligned(as: UInt16.self)))
        return UnsafeRawBufferPointer(start: cell + (isLeaf ? Format.leafCellHeader : Format.branchCellHeader), count: k)
    }

    /// Branch: appends a cell for `child` after the last slot (like ``appendRawCell(_:size:)``,
    /// the caller has checked that it fits). A child held in memory is stored with offset 0.
    func appendBranchCell(key: UnsafeRawBufferPointer, childAddress: UInt64, child: Page?) {
        Page.withBranchCell(key: key, childAddress: child == nil ? childAddress : 0) { appendRawCell($0, size: $1) }
        children.append(child)
    }
}
