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
/// `cellStart..<pageSize`. `fragmented` counts the bytes between `cellStart` and the end that no
/// slot points to — removed cells, and what replaced or shrunk cells left (reclaimed by
/// ``compact()``).
///
/// Leaf cell:   `u16 keyLength, u32 valueInfo, key, value` — valueInfo bit 31 marks an overflow
///              value, whose cell holds the u64 offset of its overflow frame instead of the bytes.
/// Branch cell: `u16 keyLength, u64 childOffset, key` — cell 0's key is empty (it covers every key
///              below cell 1's); the child of cell i holds keys in `[key i, key i+1)`.
///
/// Ownership: a page is mutable only by the write transaction whose id is `owner`; once that
/// transaction commits the page is immutable and may be read from any thread.
///
/// Raw memory: a page's bytes are read and written through pointers only in `Page+Unsafe.swift`,
/// whose opening comment gives the invariants that keep each access in bounds; this file,
/// `Page+Cells.swift` and `Page+Image.swift` go through its primitives (`loadLE(_:at:)`,
/// `storeLE(_:at:)`, ``bytes(at:count:)``…). The same rule holds for the whole module: raw
/// pointer access lives in the `+Unsafe.swift` file of the type that owns or borrows the bytes
/// (`ByteReader`, `ChangedKeyLog`, `Cursor`, `FrameHeader`, `LogWriter`, `LZ4`, and `compareKeys`
/// in `KeyCompare+Unsafe.swift`); elsewhere code passes lent buffers along, or slices them after
/// checking the range (docs/decisions.md, decision 58; `UnsafeAuditTests` keeps it so).
///
/// Exclusivity: the stored properties marked `@exclusivity(unchecked)` run on every key (a
/// dynamic check is a `swift_beginAccess` call on every access; decision 29). None of them is
/// ever passed `inout` or borrowed across a call that touches it again; the whole suite passes
/// with the checks on (build without the attributes to recheck).
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
    /// Bytes of the file the page's stored form occupies, for space accounting: the length of
    /// the frame at `diskAddress`, plus its base frame's for a leaf stored as a delta.
    @exclusivity(unchecked) var diskLength: UInt64 = 0
    /// A leaf whose frame at `diskAddress` is a leaf delta (FORMAT.md §4, "Leaf deltas"): the
    /// page frame (offset, length) of the image the delta changes; (0, 0) for a page stored
    /// whole or not written.
    @exclusivity(unchecked) var deltaBase: (offset: UInt64, length: UInt64) = (0, 0)
    /// With `deltaBase`: the keys that delta changes, ascending, each a u16 length and the bytes.
    /// A later delta of the same leaf changes them again (it holds every change since the base).
    @exclusivity(unchecked) var deltaKeys: [UInt8] = []
    /// A leaf changed since it was written: what a leaf delta of it would change (the stored form
    /// of the written leaf its content was copied from; ``LeafOrigin``). `nil` for a page no
    /// checkpoint wrote any ancestor of, for one a split or merge rebuilt, and for branches. Set
    /// by ``init(copying:owner:)``, dropped once the page is written.
    @exclusivity(unchecked) var origin: LeafOrigin?
    /// With `origin`: the keys put or deleted in this leaf since it was copied from its origin,
    /// each a u16 length and the bytes, in the order they changed (repeats allowed;
    /// ``noteChanged(_:)``): the first `changedLength` bytes of a log that every later copy of
    /// the leaf shares and appends to, so a copy per transaction copies no keys. Dropped once
    /// the page is written.
    @exclusivity(unchecked) var changeLog: ChangedKeyLog?
    /// How many bytes of `changeLog` are this version's.
    @exclusivity(unchecked) var changedLength = 0
    /// Clean pages only (see ``buildSearchHeads()``): for each cell, 8 bytes of its key after
    /// the prefix all keys of the page share, big-endian, so a search compares integers in one
    /// small array instead of chasing a slot and a cell per step. `nil` on pages a writer may
    /// still change. Set before the page is shared, never changed after.
    @exclusivity(unchecked) private(set) var heads: UnsafeMutablePointer<UInt64>?
    /// The length of the key prefix every key of the page shares (`heads` start after it).
    @exclusivity(unchecked) private(set) var headPrefix = 0

    init(pageSize: Int, kind: UInt8, level: Int, owner: UInt64) {
        self.pageSize = pageSize
        buffer = Page.allocateBuffer(pageSize: pageSize)
        children = []
        self.owner = owner
        storeLE(kind, at: 0)
        storeLE(UInt8(level), at: 1)
        count = 0
        cellStart = pageSize
        fragmented = 0
    }

    /// A copy owned by `owner`, sharing resident children.
    init(copying other: Page, owner: UInt64) {
        pageSize = other.pageSize
        buffer = Page.allocateBuffer(copying: other)
        children = other.children
        self.owner = owner
        replacedFrame = other.diskAddress != 0 ? (other.diskAddress, other.diskLength) : other.replacedFrame
        if other.isLeaf {
            if other.diskAddress != 0 {
                origin = LeafOrigin(of: other)
            } else {
                origin = other.origin
                changeLog = other.changeLog
                changedLength = other.changedLength
            }
        }
    }

    /// A copy of a written page that reaches its children through the cache (they are all
    /// written too), with search heads: what readers of later versions share once a checkpoint
    /// publishes clean trees.
    static func cleanCopy(of page: Page) -> Page {
        let copy = Page(copying: page, owner: 0)
        copy.children = page.isLeaf ? [] : Array(repeating: nil, count: page.count)
        copy.diskAddress = page.diskAddress
        copy.diskLength = page.diskLength
        copy.deltaBase = page.deltaBase
        copy.deltaKeys = page.deltaKeys
        copy.forgetOrigin()
        copy.buildSearchHeads()
        return copy
    }

    deinit { deallocateMemory() }

    // MARK: Header fields

    @inline(__always) var isLeaf: Bool { loadLE(UInt8.self, at: 0) == Format.pageKindLeaf }
    @inline(__always) var level: Int { Int(loadLE(UInt8.self, at: 1)) }

    @inline(__always) var count: Int {
        get { Int(loadLE(UInt16.self, at: 2)) }
        set { storeLE(UInt16(newValue), at: 2) }
    }

    /// Stored as u16 where 0 means 65536 cannot happen: page sizes are at most 32 KiB.
    @inline(__always) var cellStart: Int {
        get { Int(loadLE(UInt16.self, at: 4)) }
        set { storeLE(UInt16(newValue), at: 4) }
    }

    @inline(__always) var fragmented: Int {
        get { Int(loadLE(UInt16.self, at: 6)) }
        set { storeLE(UInt16(newValue), at: 6) }
    }

    @inline(__always) func slot(_ i: Int) -> Int {
        Int(loadLE(UInt16.self, at: Format.pageHeaderLength + 2 * i))
    }

    @inline(__always) func setSlot(_ i: Int, _ offset: Int) {
        storeLE(UInt16(offset), at: Format.pageHeaderLength + 2 * i)
    }

    /// Contiguous free bytes between the slot array and the cells.
    var contiguousFree: Int { cellStart - Format.pageHeaderLength - 2 * count }
    /// Free bytes after a ``compact()``.
    var totalFree: Int { contiguousFree + fragmented }
    /// Bytes a compacted image of this page occupies.
    var usedBytes: Int { pageSize - totalFree }

    // MARK: Cells

    /// The bytes before a cell's key: ``Format/leafCellHeader`` or ``Format/branchCellHeader``.
    @inline(__always) var cellHeaderLength: Int { isLeaf ? Format.leafCellHeader : Format.branchCellHeader }

    @inline(__always) func keyLength(at offset: Int) -> Int {
        Int(loadLE(UInt16.self, at: offset))
    }

    /// The key of cell `i`, borrowed from the page (see ``bytes(at:count:)``).
    @inline(__always) func key(_ i: Int) -> UnsafeRawBufferPointer {
        let cellOffset = slot(i)
        return bytes(at: cellOffset + cellHeaderLength, count: keyLength(at: cellOffset))
    }

    func cellSize(at offset: Int) -> Int {
        let keyBytes = keyLength(at: offset)
        if isLeaf {
            let info = loadLE(UInt32.self, at: offset + 2)
            let valueBytes = info & Format.overflowBit != 0
                ? Format.overflowReferenceLength : Int(info & ~Format.overflowBit)
            return Format.leafCellHeader + keyBytes + valueBytes
        }
        return Format.branchCellHeader + keyBytes
    }

    /// Leaf only: the value's length and whether it lives in an overflow frame.
    @inline(__always) func valueInfo(_ i: Int) -> (length: Int, isOverflow: Bool) {
        let info = loadLE(UInt32.self, at: slot(i) + 2)
        return (Int(info & ~Format.overflowBit), info & Format.overflowBit != 0)
    }

    /// Leaf only: the inline value bytes (or, for an overflow value, its 8-byte reference),
    /// borrowed from the page.
    @inline(__always) func valueBytes(_ i: Int) -> UnsafeRawBufferPointer {
        let cellOffset = slot(i)
        let (length, overflow) = valueInfo(i)
        return bytes(at: cellOffset + Format.leafCellHeader + keyLength(at: cellOffset),
                     count: overflow ? Format.overflowReferenceLength : length)
    }

    /// Leaf only: the offset of the overflow frame of cell `i`.
    func overflowAddress(_ i: Int) -> UInt64 {
        let cellOffset = slot(i)
        return loadLE(UInt64.self, at: cellOffset + Format.leafCellHeader + keyLength(at: cellOffset))
    }

    /// Branch only.
    @inline(__always) func childAddress(_ i: Int) -> UInt64 {
        loadLE(UInt64.self, at: slot(i) + 2)
    }

    func setChildAddress(_ i: Int, _ address: UInt64) {
        storeLE(address, at: slot(i) + 2)
    }

    // MARK: Search

    /// Leaf: the first index whose key is ≥ `key`, and whether it is equal. `key` is read only
    /// during the call.
    @inline(__always)
    func lowerBound(_ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) {
        lowerBound(Page.keyAddress(key), key.count)
    }

    /// ``lowerBound(_:)`` for the `keyCount` bytes at `key`.
    @inline(__always)
    func lowerBound(_ key: UnsafeRawPointer, _ keyCount: Int) -> (index: Int, found: Bool) {
        if let heads { return lowerBoundByHeads(heads, key, keyCount) }
        var low = 0
        var high = count
        let header = cellHeaderLength
        while low < high {
            let mid = (low &+ high) &>> 1
            let cellOffset = slot(mid)
            let order = compareKeys(address(at: cellOffset + header), keyLength(at: cellOffset), key, keyCount)
            if order < 0 { low = mid &+ 1 } else if order > 0 { high = mid } else { return (mid, true) }
        }
        return (low, false)
    }

    /// Builds ``heads`` for a page no writer will change again (decoded from disk, or a clean
    /// copy made by a checkpoint), before it is shared with other threads.
    func buildSearchHeads() {
        let first = isLeaf ? 0 : 1
        guard heads == nil, count > first else { return }
        let built = makeSearchHeads(from: first)
        headPrefix = built.prefix
        heads = built.heads
    }

    /// Branch: the index of the child whose range holds `key` (the last cell with key ≤ `key`).
    /// `key` is read only during the call.
    @inline(__always)
    func childIndex(for key: UnsafeRawBufferPointer) -> Int {
        let (i, found) = lowerBound(key)
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

    /// Inserts a slot at `index` for a cell of `cellSize` bytes (the caller reserved the room)
    /// and returns the offset where the caller writes the cell.
    @inline(__always)
    private func insertSlot(at index: Int, cellSize: Int) -> Int {
        assert(heads == nil, "a page with search heads is shared and must not change")
        let total = count
        let newStart = cellStart - cellSize
        if index < total {
            moveBytes(from: Format.pageHeaderLength + 2 * index, to: Format.pageHeaderLength + 2 * (index + 1),
                      count: 2 * (total - index))
        }
        cellStart = newStart
        count = total + 1
        setSlot(index, newStart)
        return newStart
    }

    /// Leaf: inserts a cell at `index` (the inline value, or with `overflowLength` set the
    /// 8-byte overflow reference). Returns `false` (page unchanged) if it does not fit.
    func insertLeafCell(at index: Int, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
                        overflowLength: Int?) -> Bool {
        let size = Page.leafCellSize(keyLength: key.count, valueLength: value.count)
        guard reserve(size) else { return false }
        let cellOffset = insertSlot(at: index, cellSize: size)
        writeLeafCell(at: cellOffset, key: key, value: value, overflowLength: overflowLength)
        return true
    }

    /// Leaf: replaces cell `index` with a cell of `key` (the key the cell holds). No larger: in
    /// place, the bytes it no longer needs fragmented. Larger, when the contiguous free space
    /// holds the whole new cell and the cell is not the lowest: written there afresh, its old
    /// bytes fragmented, no other cell or slot moved (decision 103). Larger otherwise, when the
    /// contiguous free space holds the growth `d`: the cells stored below it (between the cell
    /// area's start and the cell) move down by `d` and it grows in place (decisions 49 and 50).
    /// `false` (the page unchanged) when neither holds: the caller removes and inserts, which
    /// compacts the page.
    ///
    /// Writing afresh spends a whole cell of the free space where growing in place spends `d`
    /// bytes, so a page that keeps growing reaches the in-place path, and then a compaction,
    /// sooner; in exchange a growth with room costs no `memmove` and no pass over the slots. A
    /// page packed full by sequential inserts has no room for a whole cell and grows in place,
    /// as before.
    func replaceLeafCell(at index: Int, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
                         overflowLength: Int?) -> Bool {
        assert(heads == nil, "a page with search heads is shared and must not change")
        let cellOffset = slot(index)
        let old = cellSize(at: cellOffset)
        let size = Page.leafCellSize(keyLength: key.count, valueLength: value.count)
        if size <= old {
            writeLeafCell(at: cellOffset, key: key, value: value, overflowLength: overflowLength)
            fragmented += old - size
            return true
        }
        let start = cellStart
        if cellOffset > start && contiguousFree >= size {
            // A grown cell written afresh below the others when the free space holds it: its
            // old bytes count as fragmented (an image is packed; a page compacts when it needs
            // them), and no cell or slot moves (decision 103).
            writeLeafCell(at: start - size, key: key, value: value, overflowLength: overflowLength)
            fragmented += old
            cellStart = start - size
            setSlot(index, start - size)
            return true
        }
        let grow = size - old
        guard contiguousFree >= grow else { return false }
        if cellOffset > start {
            // Overlapping ranges: moveBytes moves as memmove does.
            moveBytes(from: start, to: start - grow, count: cellOffset - start)
            shiftSlots(from: start, below: cellOffset, by: grow)
        }
        cellStart = start - grow
        writeLeafCell(at: cellOffset - grow, key: key, value: value, overflowLength: overflowLength)
        setSlot(index, cellOffset - grow)
        return true
    }

    /// Replaces leaf cell `index`'s value with the inline `value`, by the rules of
    /// ``replaceLeafCell(at:key:value:overflowLength:)``: a grown cell written afresh has its
    /// header and key copied from the old cell first, one grown in place moves down with the
    /// cells above it, its key with it; the key is never read from outside the page. False, the
    /// page unchanged, when the grown cell does not fit the page's contiguous free space. The
    /// cell's value must be inline.
    func replaceLeafValue(at index: Int, value: UnsafeRawBufferPointer) -> Bool {
        assert(heads == nil, "a page with search heads is shared and must not change")
        let cellOffset = slot(index)
        let keyBytes = keyLength(at: cellOffset)
        let old = cellSize(at: cellOffset)
        let size = Page.leafCellSize(keyLength: keyBytes, valueLength: value.count)
        var at = cellOffset
        if size > old && cellOffset > cellStart && contiguousFree >= size {
            // Written afresh below the others, its header and key copied from the old cell,
            // as ``replaceLeafCell(at:key:value:overflowLength:)`` writes a grown cell.
            at = cellStart - size
            moveBytes(from: cellOffset, to: at, count: Format.leafCellHeader + keyBytes)
            fragmented += old
            cellStart = at
            setSlot(index, at)
        } else if size > old {
            let grow = size - old
            guard contiguousFree >= grow else { return false }
            let start = cellStart
            // The cells above this one, then its own header and key, down by `grow`.
            moveBytes(from: start, to: start - grow, count: cellOffset - start + Format.leafCellHeader + keyBytes)
            if cellOffset > start { shiftSlots(from: start, below: cellOffset, by: grow) }
            cellStart = start - grow
            at = cellOffset - grow
            setSlot(index, at)
        } else {
            fragmented += old - size
        }
        storeLE(UInt32(value.count), at: at + 2)
        copyBytes(value, to: at + Format.leafCellHeader + keyBytes)
        return true
    }

    /// Moves every slot that points into `start..<end` down by `delta` (the cells there moved).
    /// Eight slots at a time where the host is little-endian, as the format is (the pass over
    /// a page's slots is most of a grown cell's cost; decision 50).
    private func shiftSlots(from start: Int, below end: Int, by delta: Int) {
        let total = count
        var i = 0
        #if _endian(little)
        // Offsets within a page fit 16 bits (slots hold them so).
        let low = SIMD8<UInt16>(repeating: UInt16(truncatingIfNeeded: start))
        let high = SIMD8<UInt16>(repeating: UInt16(truncatingIfNeeded: end))
        let shift = SIMD8<UInt16>(repeating: UInt16(truncatingIfNeeded: delta))
        while i + 8 <= total {
            let offsets = slotGroup(at: i)
            let inside = (offsets .>= low) .& (offsets .< high)
            setSlotGroup(offsets.replacing(with: offsets &- shift, where: inside), at: i)
            i += 8
        }
        #endif
        while i < total {
            let cellOffset = slot(i)
            if cellOffset >= start && cellOffset < end { setSlot(i, cellOffset - delta) }
            i += 1
        }
    }

    /// Branch: inserts a cell at `index` for `child`. Returns `false` if it does not fit.
    func insertBranchCell(at index: Int, key: UnsafeRawBufferPointer, childAddress: UInt64, child: Page?) -> Bool {
        let size = Page.branchCellSize(keyLength: key.count)
        guard reserve(size) else { return false }
        let cellOffset = insertSlot(at: index, cellSize: size)
        writeBranchCell(at: cellOffset, key: key, childAddress: childAddress)
        children.insert(child, at: index)
        return true
    }

    /// Removes cell `index` (its bytes become fragmented space).
    func removeCell(at index: Int) {
        assert(heads == nil, "a page with search heads is shared and must not change")
        let total = count
        let cellOffset = slot(index)
        let size = cellSize(at: cellOffset)
        if cellOffset == cellStart { cellStart = cellOffset + size } else { fragmented += size }
        if index < total - 1 {
            moveBytes(from: Format.pageHeaderLength + 2 * (index + 1), to: Format.pageHeaderLength + 2 * index,
                      count: 2 * (total - 1 - index))
        }
        count = total - 1
        if !isLeaf { children.remove(at: index) }
        if count == 0 { cellStart = pageSize; fragmented = 0 }
    }

    /// Appends a copy of cell `index` of `source` (same kind) after the last slot; the caller
    /// has checked that it fits.
    func appendCell(from source: Page, at index: Int) {
        let sourceOffset = source.slot(index)
        let size = source.cellSize(at: sourceOffset)
        copyBytes(from: source, at: sourceOffset, count: size, to: appendSlot(cellSize: size))
        if !isLeaf { children.append(source.children[index]) }
    }

    /// Adds a slot after the last one for a cell of `cellSize` bytes and returns the offset
    /// where the caller writes the cell. Traps if the page cannot hold it without compacting:
    /// the caller checks first (``canFit(_:)``, ``contiguousFree``).
    func appendSlot(cellSize: Int) -> Int {
        let total = count
        let newStart = cellStart - cellSize
        precondition(newStart >= Format.pageHeaderLength + 2 * (total + 1), "appendSlot: page overflow")
        cellStart = newStart
        count = total + 1
        setSlot(total, newStart)
        return newStart
    }

    /// Replaces this page's content with that of `other` (same size), taking its children.
    func assign(from other: Page) {
        copyAllBytes(from: other)
        children = other.children
    }

    /// Resets to an empty page of the given kind and level.
    func reset(kind: UInt8, level: Int) {
        storeLE(kind, at: 0)
        storeLE(UInt8(level), at: 1)
        count = 0
        cellStart = pageSize
        fragmented = 0
        children = []
    }
}
