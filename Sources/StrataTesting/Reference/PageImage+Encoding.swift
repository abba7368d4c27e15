extension ReferenceFormat.PageImage.LeafCell {
    /// The cell's bytes as a page holds them (FORMAT.md §4): `u16 k`, `u32` value info
    /// (`valueLength`, bit 31 set for an overflow value), the key, then the inline value's bytes
    /// or the u64 overflow offset. It writes whatever the cell holds — a value info that
    /// disagrees with the bytes, a key of any length (its length cut to 16 bits) — since
    /// forging is what the tools use it for.
    package func encoded() -> [UInt8] {
        var writer = ReferenceFormat.ByteWriter()
        writer.u16(UInt16(truncatingIfNeeded: key.count))
        var valueInfo = UInt32(truncatingIfNeeded: valueLength)
        if case .overflow = value { valueInfo |= ReferenceFormat.overflowBit }
        writer.u32(valueInfo)
        writer.append(key)
        switch value {
        case .inline(let bytes): writer.append(bytes)
        case .overflow(let offset): writer.u64(offset)
        }
        return writer.bytes
    }

    /// Bytes ``encoded()`` writes: the cell's share of a page (its slot not counted).
    package var encodedLength: Int {
        switch value {
        case .inline(let bytes): return ReferenceFormat.leafCellHeaderLength + key.count + bytes.count
        case .overflow: return ReferenceFormat.leafCellHeaderLength + key.count + 8
        }
    }
}

extension ReferenceFormat.PageImage {
    /// Bytes a packed leaf image of `cells` takes: `8 + 2·count + cell bytes` (§4).
    package static func leafImageLength(_ cells: [LeafCell]) -> Int {
        slotPosition(cells.count) + cells.reduce(0) { $0 + $1.encodedLength }
    }

    /// A packed leaf image of `cells` for pages of `pageSize` bytes, slots in the order given:
    /// kind 1, level 0, the count, `cellStart = P − cell bytes`, fragmented 0, the slots, then
    /// the cells one after the other from `cellStart` (slot 0's first) to the end of the page.
    ///
    /// ```
    ///  0   1   2       4           6   8                      8+2·count
    ///  | 1 | 0 | count | cellStart | 0 | slot 0 | … | slot n-1 | cell 0 | … | cell n-1 |
    /// ```
    ///
    /// Nothing is checked: cells out of order, too many bytes for the page (the header fields
    /// are then cut to 16 bits) are written as given — ``init(_:pageSize:)`` and
    /// ``validateCells(frameOffset:)`` judge the result.
    package static func leafImage(_ cells: [LeafCell], pageSize: Int) -> [UInt8] {
        let encodedCells = cells.map { $0.encoded() }
        let cellStart = pageSize - encodedCells.reduce(0) { $0 + $1.count }
        var writer = ReferenceFormat.ByteWriter()
        writer.u8(ReferenceFormat.leafKind)
        writer.u8(0)
        writer.u16(UInt16(truncatingIfNeeded: cells.count))
        writer.u16(UInt16(truncatingIfNeeded: cellStart))
        writer.u16(0)
        var slot = cellStart
        for cell in encodedCells {
            writer.u16(UInt16(truncatingIfNeeded: slot))
            slot += cell.count
        }
        for cell in encodedCells { writer.append(cell) }
        return writer.bytes
    }
}
