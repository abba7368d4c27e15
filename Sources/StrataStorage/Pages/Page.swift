/// One B+tree page in memory: a slotted page whose bytes are exactly the page image that a
/// checkpoint compresses (FORMAT.md, "Page image").
///
/// ```
///  0      1      2       4           6              8
///  | kind | level| count | cellStart | fragmented   | slot 0 | slot 1 | … →      ← … | cell | cell |
///  +------+------+-------+-----------+--------------+--------+--------+--- free ---+------+------+
///                                                     u16 offsets of cells,          cells grow down
///                                                     in key order                   from pageSize
/// ```
/// Invariant: `8 + 2·count ≤ cellStart ≤ pageSize`, and every slot points at a whole cell inside
/// `cellStart..<pageSize`. `fragmented` counts bytes of removed cells between `cellStart` and
/// the end that no slot points to (reclaimed by ``compact()``).
///
/// Leaf cell:   `u16 keyLength, u32 valueInfo, key, value` — valueInfo bit 31 marks an overflow
///              value, whose cell holds the u64 offset of its overflow frame instead of the bytes.
/// Branch cell: `u16 keyLength, u64 childOffset, key` — cell 0's key is empty (it covers every key
///              below cell 1's); the child of cell i holds keys in `[key i, key i+1)`.
///
/// Ownership: a page is mutable only by the write transaction whose id is `owner`; once that
/// transaction commits the page is immutable and may be read from any thread. Raw pointer access
/// lives in this type and its extensions only.
///
/// Exclusivity: the stored properties marked `@exclusivity(unchecked)` run on every key (a
/// dynamic check is a `swift_beginAccess` call, ~76 instructions; docs/decisions.md,
/// "Exclusivity"). None of them is ever passed `inout` or borrowed across a call that touches it
/// again; the whole suite passes with the checks on (build without the attributes to recheck).
final class Page: @unchecked Sendable {
    let buffer: UnsafeMutableRawPointer
    let pageSize: Int
    /// Branch pages only, parallel to the cells: the child page when it is held in memory
    /// because no checkpoint has written it yet (its cell's offset is then 0). `nil` entries are
    /// found through the page cache by the cell's child offset.
    @exclusivity(unchecked) var children: [Page?]
    /// The write transaction allowed to mutate this page (0 = none).
    @exclusivity(unchecked) var owner: UInt64
    /// File offset of the frame holding this page image, once a checkpoint wrote it.
    @exclusivity(unchecked) var diskAddress: UInt64 = 0
    /// The frame (offset, length) that this page's lineage replaced: it becomes garbage when
    /// this page is written. Zero when nothing was replaced.
    @exclusivity(unchecked) var replacedFrame: (offset: UInt64, length: UInt64) = (0, 0)
    /// Length of the frame at `diskAddress`, for space accounting.
    @exclusivity(unchecked) var diskLength: UInt64 = 0
    /// Clean pages only (see ``buildSearchHeads()``): for each cell, 8 bytes of its key after
    /// the prefix all keys of the page share, big-endian, so a search compares integers in one
    /// small array instead of chasing a slot and a cell per step. `nil` on pages a writer may
    /// still change. Set before the page is shared, never changed after.
    @exclusivity(unchecked) private(set) var heads: UnsafeMutablePointer<UInt64>?
    /// The length of the key prefix every key of the page shares (`heads` start after it).
    @exclusivity(unchecked) private(set) var headPrefix = 0

    init(pageSize: Int, kind: UInt8, level: Int, owner: UInt64) {
        self.pageSize = pageSize
        buffer = .allocate(byteCount: pageSize, alignment: 16)
        children = []
        self.owner = owner
        buffer.storeBytes(of: kind, toByteOffset: 0, as: UInt8.self)
        buffer.storeBytes(of: UInt8(level), toByteOffset: 1, as: UInt8.self)
        count = 0
        cellStart = pageSize
        fragmented = 0
    }

    /// A copy owned by `owner`, sharing resident children.
    init(copying other: Page, owner: UInt64) {
        pageSize = other.pageSize
        buffer = .allocate(byteCount: pageSize, alignment: 16)
        buffer.copyMemory(from: other.buffer, byteCount: pageSize)
        children = other.children
        self.owner = owner
        replacedFrame = other.diskAddress != 0 ? (other.diskAddress, other.diskLength) : other.replacedFrame
    }

    deinit {
        buffer.deallocate()
        heads?.deallocate()
    }

    // MARK: Header fields

    @inline(__always) var isLeaf: Bool { buffer.loadUnaligned(fromByteOffset: 0, as: UInt8.self) == Format.pageKindLeaf }
    @inline(__always) var level: Int { Int(buffer.loadUnaligned(fromByteOffset: 1, as: UInt8.self)) }

    @inline(__always) var count: Int {
        get { Int(UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: 2, as: UInt16.self))) }
        set { buffer.storeBytes(of: UInt16(newValue).littleEndian, toByteOffset: 2, as: UInt16.self) }
    }

    /// Stored as u16 where 0 means 65536 cannot happen: page sizes are at most 32 KiB.
    @inline(__always) var cellStart: Int {
        get { Int(UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: 4, as: UInt16.self))) }
        set { buffer.storeBytes(of: UInt16(newValue).littleEndian, toByteOffset: 4, as: UInt16.self) }
    }

    @inline(__always) var fragmented: Int {
        get { Int(UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: 6, as: UInt16.self))) }
        set { buffer.storeBytes(of: UInt16(newValue).littleEndian, toByteOffset: 6, as: UInt16.self) }
    }

    @inline(__always) func slot(_ i: Int) -> Int {
        Int(UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: Format.pageHeaderLength + 2 * i, as: UInt16.self)))
    }

    @inline(__always) func setSlot(_ i: Int, _ offset: Int) {
        buffer.storeBytes(of: UInt16(offset).littleEndian, toByteOffset: Format.pageHeaderLength + 2 * i, as: UInt16.self)
    }

    /// Contiguous free bytes between the slot array and the cells.
    var contiguousFree: Int { cellStart - Format.pageHeaderLength - 2 * count }
    /// Free bytes after a ``compact()``.
    var totalFree: Int { contiguousFree + fragmented }
    /// Bytes a compacted image of this page occupies.
    var usedBytes: Int { pageSize - totalFree }

    // MARK: Cells

    @inline(__always) func keyLength(at offset: Int) -> Int {
        Int(UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
    }

    @inline(__always) func key(_ i: Int) -> UnsafeRawBufferPointer {
        let off = slot(i)
        let header = isLeaf ? Format.leafCellHeader : Format.branchCellHeader
        return UnsafeRawBufferPointer(start: buffer + off + header, count: keyLength(at: off))
    }

    func cellSize(at offset: Int) -> Int {
        let k = keyLength(at: offset)
        if isLeaf {
            let info = UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset + 2, as: UInt32.self))
            let v = info & Format.overflowBit != 0 ? Format.overflowReferenceLength : Int(info & ~Format.overflowBit)
            return Format.leafCellHeader + k + v
        }
        return Format.branchCellHeader + k
    }

    /// Leaf only: the value's length and whether it lives in an overflow frame.
    @inline(__always) func valueInfo(_ i: Int) -> (length: Int, isOverflow: Bool) {
        let info = UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: slot(i) + 2, as: UInt32.self))
        return (Int(info & ~Format.overflowBit), info & Format.overflowBit != 0)
    }

    /// Leaf only: the inline value bytes (or, for an overflow value, its 8-byte reference).
    @inline(__always) func valueBytes(_ i: Int) -> UnsafeRawBufferPointer {
        let off = slot(i)
        let k = keyLength(at: off)
        let (length, overflow) = valueInfo(i)
        return UnsafeRawBufferPointer(
            start: buffer + off + Format.leafCellHeader + k,
            count: overflow ? Format.overflowReferenceLength : length)
    }

    /// Leaf only: the offset of the overflow frame of cell `i`.
    func overflowAddress(_ i: Int) -> UInt64 {
        let v = valueBytes(i)
        return v.loadUnaligned(as: UInt64.self).littleEndian
    }

    /// Branch only.
    @inline(__always) func childAddress(_ i: Int) -> UInt64 {
        UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: slot(i) + 2, as: UInt64.self))
    }

    func setChildAddress(_ i: Int, _ address: UInt64) {
        buffer.storeBytes(of: address.littleEndian, toByteOffset: slot(i) + 2, as: UInt64.self)
    }

    // MARK: Search

    /// Leaf: the first index whose key is ≥ `key`, and whether it is equal.
    @inline(__always)
    func lowerBound(_ key: UnsafeRawPointer, _ keyCount: Int) -> (index: Int, found: Bool) {
        if let heads { return lowerBoundByHeads(heads, key, keyCount) }
        var lo = 0
        var hi = count
        let header = isLeaf ? Format.leafCellHeader : Format.branchCellHeader
        let base = UnsafeRawPointer(buffer)
        while lo < hi {
            let mid = (lo &+ hi) &>> 1
            let off = slot(mid)
            let c = compareKeys(base + off + header, keyLength(at: off), key, keyCount)
            if c < 0 { lo = mid &+ 1 } else if c > 0 { hi = mid } else { return (mid, true) }
        }
        return (lo, false)
    }

    /// Builds ``heads`` for a page no writer will change again (decoded from disk, or a clean
    /// copy made by a checkpoint), before it is shared with other threads.
    func buildSearchHeads() {
        let n = count
        let first = isLeaf ? 0 : 1
        guard heads == nil, n > first else { return }
        let lo = key(first)
        let hi = key(n - 1)
        var p = 0
        let limit = min(lo.count, hi.count)
        while p < limit && lo[p] == hi[p] { p += 1 }
        headPrefix = p
        let h = UnsafeMutablePointer<UInt64>.allocate(capacity: n)
        for i in first..<n {
            let k = key(i)
            h[i] = Page.head(k.baseAddress! + p, k.count - p)
        }
        heads = h
    }

    /// Up to 8 bytes as a big-endian integer, zero-padded: order-preserving (x ≤ y ⇒ head(x) ≤ head(y)).
    @inline(__always)
    static func head(_ p: UnsafeRawPointer, _ n: Int) -> UInt64 {
        if n >= 8 { return UInt64(bigEndian: p.loadUnaligned(as: UInt64.self)) }
        var v: UInt64 = 0
        var i = 0
        while i < 8 {
            v = v << 8 | (i < n ? UInt64(p.load(fromByteOffset: i, as: UInt8.self)) : 0)
            i += 1
        }
        return v
    }

    /// ``lowerBound(_:_:)`` over ``heads``: the prefix is compared once, then integers; only
    /// cells whose heads tie with the key's are compared in full.
    @inline(__always)
    private func lowerBoundByHeads(_ heads: UnsafeMutablePointer<UInt64>, _ key: UnsafeRawPointer, _ keyCount: Int) -> (index: Int, found: Bool) {
        let n = count
        let first = isLeaf ? 0 : 1
        let header = isLeaf ? Format.leafCellHeader : Format.branchCellHeader
        let base = UnsafeRawPointer(buffer)
        let p = headPrefix
        if p > 0 {
            let m = min(p, keyCount)
            let c = compareKeys(key, m, base + slot(first) + header, m)
            if c < 0 || (c == 0 && keyCount < p) { return (first, false) }
            if c > 0 { return (n, false) }
        }
        let h = Page.head(key + p, keyCount - p)
        var lo = first
        var hi = n
        while lo < hi {
            let mid = (lo &+ hi) &>> 1
            if heads[mid] < h { lo = mid &+ 1 } else { hi = mid }
        }
        var i = lo
        while i < n && heads[i] == h {
            let off = slot(i)
            let c = compareKeys(base + off + header, keyLength(at: off), key, keyCount)
            if c < 0 { i += 1 } else { return (i, c == 0) }
        }
        return (i, false)
    }

    /// Branch: the index of the child whose range holds `key` (the last cell with key ≤ `key`).
    @inline(__always)
    func childIndex(for key: UnsafeRawPointer, _ keyCount: Int) -> Int {
        let (i, found) = lowerBound(key, keyCount)
        if found { return i }
        return i > 0 ? i - 1 : 0
    }

    // MARK: Mutation (owner only)

    /// Makes room for a cell of `size` bytes plus its slot; `false` if the page cannot hold it.
    private func reserve(_ size: Int) -> Bool {
        if contiguousFree >= size + 2 { return true }
        if totalFree >= size + 2 {
            compact()
            return true
        }
        return false
    }

    /// Whether a cell of `size` bytes (without slot) fits after compaction.
    func canFit(_ size: Int) -> Bool { totalFree >= size + 2 }

    /// Inserts a slot at `index` for a cell whose bytes `write` fills at the returned offset.
    @inline(__always)
    private func insertSlot(at index: Int, cellSize: Int) -> Int {
        assert(heads == nil, "a page with search heads is shared and must not change")
        let n = count
        let newStart = cellStart - cellSize
        let slots = buffer + Format.pageHeaderLength
        if index < n {
            (slots + 2 * (index + 1)).copyMemory(from: slots + 2 * index, byteCount: 2 * (n - index))
        }
        cellStart = newStart
        count = n + 1
        setSlot(index, newStart)
        return newStart
    }

    /// Leaf: inserts a cell at `index` (the inline value, or with `overflowLength` set the
    /// 8-byte overflow reference). Returns `false` (page unchanged) if it does not fit.
    func insertLeafCell(at index: Int, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, overflowLength: Int?) -> Bool {
        let size = Page.leafCellSize(keyLength: key.count, valueLength: value.count)
        guard reserve(size) else { return false }
        let off = insertSlot(at: index, cellSize: size)
        Page.writeLeafCell(at: buffer + off, key: key, value: value, overflowLength: overflowLength)
        return true
    }

    /// Leaf: replaces cell `index` with a cell of `key` (the key the cell holds), keeping the
    /// page's other cells where they are or close by: in place when the new cell is no larger
    /// (the bytes it no longer needs become fragmented space); when it grows by `d` bytes and
    /// the contiguous free space holds `d`, the cells stored below it (between the cell area's
    /// start and the cell) move down by `d` and it grows in place. `false` (the page unchanged)
    /// when neither holds: the caller removes and inserts.
    ///
    /// An update mostly keeps a row's size or grows it by a byte. Removing and inserting in a
    /// full page compacted every cell of it (~2.5K instructions an updated row); writing the
    /// grown cell into the contiguous free space instead left its old bytes fragmented, so a
    /// page packed full by sequential inserts compacted again every second or third growth
    /// (callgrind: 4,159 compactions in 10,000 updates). Moving the cells below costs a
    /// `memmove` of at most a page and one pass over the slots, and uses only `d` bytes.
    func replaceLeafCell(at index: Int, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, overflowLength: Int?) -> Bool {
        assert(heads == nil, "a page with search heads is shared and must not change")
        let off = slot(index)
        let old = cellSize(at: off)
        let size = Page.leafCellSize(keyLength: key.count, valueLength: value.count)
        if size <= old {
            Page.writeLeafCell(at: buffer + off, key: key, value: value, overflowLength: overflowLength)
            fragmented += old - size
            return true
        }
        let grow = size - old
        guard contiguousFree >= grow else { return false }
        let start = cellStart
        if off > start {
            // Overlapping ranges: copyMemory moves as memmove does.
            (buffer + start - grow).copyMemory(from: buffer + start, byteCount: off - start)
            shiftSlots(from: start, below: off, by: grow)
        }
        cellStart = start - grow
        Page.writeLeafCell(at: buffer + off - grow, key: key, value: value, overflowLength: overflowLength)
        setSlot(index, off - grow)
        return true
    }

    /// Moves every slot that points into `start..<end` down by `delta` (the cells there moved).
    /// Eight slots at a time where the host is little-endian, as the format is (the pass over
    /// a page's slots was most of a grown cell's cost, ~12 instructions a slot).
    private func shiftSlots(from start: Int, below end: Int, by delta: Int) {
        let n = count
        let slots = buffer + Format.pageHeaderLength
        var i = 0
        #if _endian(little)
        // Offsets within a page fit 16 bits (slots hold them so).
        let low = SIMD8<UInt16>(repeating: UInt16(truncatingIfNeeded: start))
        let high = SIMD8<UInt16>(repeating: UInt16(truncatingIfNeeded: end))
        let by = SIMD8<UInt16>(repeating: UInt16(truncatingIfNeeded: delta))
        while i + 8 <= n {
            let at = slots + 2 * i
            let offsets = at.loadUnaligned(as: SIMD8<UInt16>.self)
            let inside = (offsets .>= low) .& (offsets .< high)
            at.storeBytes(of: offsets.replacing(with: offsets &- by, where: inside), as: SIMD8<UInt16>.self)
            i += 8
        }
        #endif
        while i < n {
            let o = slot(i)
            if o >= start && o < end { setSlot(i, o - delta) }
            i += 1
        }
    }

    /// Branch: inserts a cell at `index` for `child`. Returns `false` if it does not fit.
    func insertBranchCell(at index: Int, key: UnsafeRawBufferPointer, childAddress: UInt64, child: Page?) -> Bool {
        let size = Page.branchCellSize(keyLength: key.count)
        guard reserve(size) else { return false }
        let off = insertSlot(at: index, cellSize: size)
        Page.writeBranchCell(at: buffer + off, key: key, childAddress: childAddress)
        children.insert(child, at: index)
        return true
    }

    /// Removes cell `index` (its bytes become fragmented space).
    func removeCell(at index: Int) {
        assert(heads == nil, "a page with search heads is shared and must not change")
        let n = count
        let off = slot(index)
        let size = cellSize(at: off)
        if off == cellStart { cellStart = off + size } else { fragmented += size }
        let slots = buffer + Format.pageHeaderLength
        if index < n - 1 {
            (slots + 2 * index).copyMemory(from: slots + 2 * (index + 1), byteCount: 2 * (n - 1 - index))
        }
        count = n - 1
        if !isLeaf { children.remove(at: index) }
        if count == 0 { cellStart = pageSize; fragmented = 0 }
    }

    /// Rewrites the cells contiguously at the end of the page, in slot order, so `fragmented`
    /// becomes 0. Slot order is key order, which also makes images compress better.
    func compact() {
        let n = count
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { scratch.deallocate() }
        var top = pageSize
        for i in 0..<n {
            let off = slot(i)
            let size = cellSize(at: off)
            top -= size
            (scratch + top).copyMemory(from: buffer + off, byteCount: size)
            setSlot(i, top)
        }
        (buffer + top).copyMemory(from: scratch + top, byteCount: pageSize - top)
        cellStart = top
        fragmented = 0
    }

    /// Appends a copy of cell `index` of `source` (same kind) after the last slot; the caller
    /// has checked that it fits.
    func appendCell(from source: Page, at index: Int) {
        let off = source.slot(index)
        let size = source.cellSize(at: off)
        appendRawCell(source.buffer + off, size: size)
        if !isLeaf { children.append(source.children[index]) }
    }

    func appendRawCell(_ bytes: UnsafeRawPointer, size: Int) {
        let n = count
        let newStart = cellStart - size
        precondition(newStart >= Format.pageHeaderLength + 2 * (n + 1), "appendRawCell: page overflow")
        (buffer + newStart).copyMemory(from: bytes, byteCount: size)
        cellStart = newStart
        count = n + 1
        setSlot(n, newStart)
    }

    /// Replaces this page's content with that of `other` (same size), taking its children.
    func assign(from other: Page) {
        buffer.copyMemory(from: other.buffer, byteCount: pageSize)
        children = other.children
    }

    /// Resets to an empty page of the given kind and level.
    func reset(kind: UInt8, level: Int) {
        buffer.storeBytes(of: kind, toByteOffset: 0, as: UInt8.self)
        buffer.storeBytes(of: UInt8(level), toByteOffset: 1, as: UInt8.self)
        count = 0
        cellStart = pageSize
        fragmented = 0
        children = []
    }
}
