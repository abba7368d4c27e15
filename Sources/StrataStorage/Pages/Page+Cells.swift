/// Building cells (FORMAT.md §4): the one place that writes a cell's bytes, whether the cell is
/// inserted at a slot, appended, or placed by a split in whichever half it lands in.
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

    /// Writes a leaf cell at `offset`, where the caller made room for
    /// ``leafCellSize(keyLength:valueLength:)`` bytes. `value` is the inline value, or (with
    /// `overflowLength` set to the value's length) the 8-byte little-endian offset of the
    /// overflow frame holding it.
    @inline(__always)
    func writeLeafCell(at offset: Int, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
                       overflowLength: Int?) {
        storeLE(UInt16(key.count), at: offset)
        let info: UInt32 = overflowLength.map { UInt32($0) | Format.overflowBit } ?? UInt32(value.count)
        storeLE(info, at: offset + 2)
        copyBytes(key, to: offset + Format.leafCellHeader)
        copyBytes(value, to: offset + Format.leafCellHeader + key.count)
    }

    /// Writes a branch cell at `offset`, where the caller made room for
    /// ``branchCellSize(keyLength:)`` bytes. `childAddress` is 0 for a child held in memory (not
    /// yet written by a checkpoint).
    @inline(__always)
    func writeBranchCell(at offset: Int, key: UnsafeRawBufferPointer, childAddress: UInt64) {
        storeLE(UInt16(key.count), at: offset)
        storeLE(childAddress, at: offset + 2)
        copyBytes(key, to: offset + Format.branchCellHeader)
    }

    /// A cell not yet written, described by its parts: what a split places into whichever of
    /// the two pages it lands in. Its bytes are borrowed from the caller.
    struct PendingCell {
        let isLeaf: Bool
        let key: UnsafeRawBufferPointer
        /// Leaf: the inline value, or the 8-byte overflow reference. Branch: empty.
        let value: UnsafeRawBufferPointer
        /// Leaf: the value's length when `value` is an overflow reference.
        let overflowLength: Int?
        /// Branch: the child's frame offset (0 for a child held in memory).
        let childAddress: UInt64

        /// A leaf cell (see ``Page/writeLeafCell(at:key:value:overflowLength:)``).
        init(leafKey key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, overflowLength: Int?) {
            isLeaf = true
            self.key = key
            self.value = value
            self.overflowLength = overflowLength
            childAddress = 0
        }

        /// A branch cell.
        init(branchKey key: UnsafeRawBufferPointer, childAddress: UInt64) {
            isLeaf = false
            self.key = key
            value = UnsafeRawBufferPointer(start: nil, count: 0)
            overflowLength = nil
            self.childAddress = childAddress
        }

        /// The cell's size in bytes, without its slot.
        var size: Int {
            isLeaf ? Page.leafCellSize(keyLength: key.count, valueLength: value.count)
                : Page.branchCellSize(keyLength: key.count)
        }
    }

    /// Appends `cell` (of this page's kind) after the last slot; the caller has checked that it
    /// fits. A branch's caller appends the child too.
    func appendCell(_ cell: PendingCell) {
        let cellOffset = appendSlot(cellSize: cell.size)
        if cell.isLeaf {
            writeLeafCell(at: cellOffset, key: cell.key, value: cell.value, overflowLength: cell.overflowLength)
        } else {
            writeBranchCell(at: cellOffset, key: cell.key, childAddress: cell.childAddress)
        }
    }

    /// Branch: appends a cell for `child` after the last slot (like ``appendCell(_:)``, the
    /// caller has checked that it fits). A child held in memory is stored with offset 0.
    func appendBranchCell(key: UnsafeRawBufferPointer, childAddress: UInt64, child: Page?) {
        appendCell(PendingCell(branchKey: key, childAddress: child == nil ? childAddress : 0))
        children.append(child)
    }
}
