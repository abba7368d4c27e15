#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Raw access to a page's memory: the only code that reads or writes a page's bytes through a
/// pointer. `Page.swift`, `Page+Cells.swift` and `Page+Image.swift` go through these primitives.
///
/// Why every access here stays inside memory that is alive:
///
/// - **Lifetime.** `buffer` is `pageSize` bytes (at most 32 KiB), 16-byte aligned, allocated
///   by ``allocateBuffer(pageSize:)`` in `init` and freed by ``deallocateMemory()`` in `deinit`;
///   it never moves or grows. `heads`, once set, holds `count` words, allocated by
///   ``makeSearchHeads(from:)`` before the page is shared and freed in `deinit`.
/// - **Bounds of the page's own bytes.** Every offset given to the primitives that take one
///   lies in `0..<pageSize` with the access wholly inside: header fields at fixed offsets
///   below 8; slot `i < count` at `8 + 2i`, inside the slot array since `8 + 2·count ≤
///   cellStart`; a cell at the offset its slot holds, whole inside `cellStart..<pageSize` (the
///   invariant in `Page`). Whoever writes a page keeps the invariant: the mutation methods
///   (`reserve` and `insertSlot`, `appendSlot`, `replaceLeafCell` check the free space before
///   a cell is written), and for bytes from the file ``decodeImage(_:pageSize:offset:)``, which
///   checks every slot and cell before any other code sees the page. Debug builds check each
///   access against `pageSize` (``assertInPage(_:_:)``); release builds rely on the invariant
///   (these run on every key).
/// - **Bounds of other memory.** The primitives that write into a caller's buffer
///   (``copyBytes(at:count:into:at:)``, ``storeLE(_:into:at:)``) check with `precondition`
///   that the access fits it: they run once per cell of a page image, not per key. A caller's
///   bytes copied into the page (``copyBytes(_:to:)``) are read for their own `count`.
/// - **Borrowed views.** ``bytes(at:count:)`` and ``address(at:)`` lend the page's memory: it
///   stays valid while the page is alive and unchanged. A committed page never changes (see
///   `Page`, "Ownership") and its readers hold a reference to it (a cursor's path, the leaf a
///   lookup returned); a page a writer owns changes only through that writer, which does not
///   keep a view across a change.
/// - **Alignment.** None is assumed: loads and stores are unaligned (`loadUnaligned`,
///   `storeBytes`), since cells start at any byte. The 16-byte alignment of `buffer` only
///   helps `memcpy`.
/// - **Byte order.** Fields are little-endian (FORMAT.md §4): `loadLE(_:at:)` and
///   `storeLE(_:at:)` convert; search heads are big-endian on purpose (``head(_:count:)``).
/// - **Keys lent by callers.** Search takes a key as a pointer and a count, valid for the call.
///   ``keyAddress(_:)`` gives an empty key (no base address) a non-null address that is never
///   read: every comparison reads `min(count, …) = 0` bytes of it.
extension Page {
    // MARK: Memory

    /// A page's memory: `pageSize` bytes, uninitialized.
    static func allocateBuffer(pageSize: Int) -> UnsafeMutableRawPointer {
        .allocate(byteCount: pageSize, alignment: 16)
    }

    /// A page's memory holding a copy of `other`'s bytes.
    static func allocateBuffer(copying other: Page) -> UnsafeMutableRawPointer {
        let copy = allocateBuffer(pageSize: other.pageSize)
        copy.copyMemory(from: other.buffer, byteCount: other.pageSize)
        return copy
    }

    /// Frees the page's memory; `deinit` only.
    func deallocateMemory() {
        buffer.deallocate()
        heads?.deallocate()
    }

    // MARK: The page's own bytes (in bounds by the layout invariant; checked in debug builds)

    /// Debug builds: traps unless the `size` bytes at `offset` lie inside the page. Release
    /// builds compile it to nothing: the invariant above keeps every access in bounds.
    @inline(__always)
    func assertInPage(_ offset: Int, _ size: Int) {
        #if DEBUG
        precondition(offset >= 0 && size >= 0 && offset <= pageSize - size,
                     "\(size) bytes at \(offset) lie outside a page of \(pageSize)")
        #endif
    }

    // The loads and stores come in one overload per width rather than one generic function:
    // the generic one, inlined and specialized, still left a retain and release of the page
    // around each call on the cursor's walk, one pair per entry (decision 58).

    /// The byte at `offset`.
    @inline(__always)
    func loadLE(_ type: UInt8.Type, at offset: Int) -> UInt8 {
        assertInPage(offset, 1)
        return buffer.load(fromByteOffset: offset, as: UInt8.self)
    }

    /// The little-endian `UInt16` at `offset`.
    @inline(__always)
    func loadLE(_ type: UInt16.Type, at offset: Int) -> UInt16 {
        assertInPage(offset, 2)
        return UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    /// The little-endian `UInt32` at `offset`.
    @inline(__always)
    func loadLE(_ type: UInt32.Type, at offset: Int) -> UInt32 {
        assertInPage(offset, 4)
        return UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    /// The little-endian `UInt64` at `offset`.
    @inline(__always)
    func loadLE(_ type: UInt64.Type, at offset: Int) -> UInt64 {
        assertInPage(offset, 8)
        return UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// Stores the byte `value` at `offset`.
    @inline(__always)
    func storeLE(_ value: UInt8, at offset: Int) {
        assertInPage(offset, 1)
        buffer.storeBytes(of: value, toByteOffset: offset, as: UInt8.self)
    }

    /// Stores `value` little-endian at `offset`.
    @inline(__always)
    func storeLE(_ value: UInt16, at offset: Int) {
        assertInPage(offset, 2)
        buffer.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt16.self)
    }

    /// Stores `value` little-endian at `offset`.
    @inline(__always)
    func storeLE(_ value: UInt32, at offset: Int) {
        assertInPage(offset, 4)
        buffer.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
    }

    /// Stores `value` little-endian at `offset`.
    @inline(__always)
    func storeLE(_ value: UInt64, at offset: Int) {
        assertInPage(offset, 8)
        buffer.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self)
    }

    /// The address of the byte at `offset`, lent like ``bytes(at:count:)``.
    @inline(__always)
    func address(at offset: Int) -> UnsafeRawPointer {
        assertInPage(offset, 0)
        return UnsafeRawPointer(buffer + offset)
    }

    /// The `count` bytes at `offset`, lent: valid while the page is alive and unchanged.
    @inline(__always)
    func bytes(at offset: Int, count: Int) -> UnsafeRawBufferPointer {
        assertInPage(offset, count)
        return UnsafeRawBufferPointer(start: buffer + offset, count: count)
    }

    #if DEBUG
    /// Whether the `count` bytes at `offset` equal the `count` bytes at `otherOffset` of `other`
    /// (`memcmp`: the debug check of a leaf delta compares whole cells of two pages).
    @inline(__always)
    func bytesEqual(at offset: Int, _ other: Page, at otherOffset: Int, count: Int) -> Bool {
        assertInPage(offset, count)
        other.assertInPage(otherOffset, count)
        return memcmp(buffer + offset, other.buffer + otherOffset, count) == 0
    }
    #endif

    /// Copies `source` (a caller's bytes, possibly empty) to `offset`.
    @inline(__always)
    func copyBytes(_ source: UnsafeRawBufferPointer, to offset: Int) {
        guard let start = source.baseAddress else { return }
        assertInPage(offset, source.count)
        (buffer + offset).copyMemory(from: start, byteCount: source.count)
    }

    /// Copies `count` bytes at `sourceOffset` of `source` (a page of the same size) to `offset`.
    @inline(__always)
    func copyBytes(from source: Page, at sourceOffset: Int, count: Int, to offset: Int) {
        source.assertInPage(sourceOffset, count)
        assertInPage(offset, count)
        (buffer + offset).copyMemory(from: source.buffer + sourceOffset, byteCount: count)
    }

    /// Moves `count` bytes within the page; the ranges may overlap (`copyMemory` is `memmove`).
    @inline(__always)
    func moveBytes(from source: Int, to destination: Int, count: Int) {
        assertInPage(source, count)
        assertInPage(destination, count)
        (buffer + destination).copyMemory(from: buffer + source, byteCount: count)
    }

    /// Makes every byte of this page a copy of `other`'s (same page size).
    func copyAllBytes(from other: Page) {
        precondition(other.pageSize == pageSize, "pages of \(other.pageSize) and \(pageSize) bytes")
        buffer.copyMemory(from: other.buffer, byteCount: pageSize)
    }

    #if _endian(little)
    /// Slots `index..<index + 8` as one vector (the host's byte order is the format's).
    @inline(__always)
    func slotGroup(at index: Int) -> SIMD8<UInt16> {
        let offset = Format.pageHeaderLength + 2 * index
        assertInPage(offset, MemoryLayout<SIMD8<UInt16>>.size)
        return buffer.loadUnaligned(fromByteOffset: offset, as: SIMD8<UInt16>.self)
    }

    /// Stores slots `index..<index + 8` from one vector.
    @inline(__always)
    func setSlotGroup(_ offsets: SIMD8<UInt16>, at index: Int) {
        let offset = Format.pageHeaderLength + 2 * index
        assertInPage(offset, MemoryLayout<SIMD8<UInt16>>.size)
        buffer.storeBytes(of: offsets, toByteOffset: offset, as: SIMD8<UInt16>.self)
    }
    #endif

    /// Rewrites the cells contiguously at the end of the page, in slot order, so `fragmented`
    /// becomes 0. Slot order is key order, which also makes images compress better. Each cell
    /// is read at its slot's offset for its ``cellSize(at:)`` (inside the page by the
    /// invariant) and written below the previous one: `top` never goes under `cellStart`, since
    /// the cells add up to at most `pageSize - cellStart`.
    func compact() {
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { scratch.deallocate() }
        var top = pageSize
        for i in 0..<count {
            let cellOffset = slot(i)
            let size = cellSize(at: cellOffset)
            top -= size
            (scratch + top).copyMemory(from: buffer + cellOffset, byteCount: size)
            setSlot(i, top)
        }
        (buffer + top).copyMemory(from: scratch + top, byteCount: pageSize - top)
        cellStart = top
        fragmented = 0
    }

    // MARK: Other memory (checked: once per cell of an image)

    /// Copies `count` bytes at `offset` of this page into `destination` at `destinationOffset`,
    /// which must hold them.
    func copyBytes(at offset: Int, count: Int, into destination: UnsafeMutableRawBufferPointer,
                   at destinationOffset: Int) {
        precondition(destinationOffset >= 0 && count >= 0 && destinationOffset <= destination.count - count,
                     "copy of \(count) bytes to \(destinationOffset) in a buffer of \(destination.count)")
        assertInPage(offset, count)
        guard count > 0 else { return }
        (destination.baseAddress! + destinationOffset).copyMemory(from: buffer + offset, byteCount: count)
    }

    /// Stores `value` little-endian at `offset` of `destination`, which must hold it.
    static func storeLE<T: FixedWidthInteger>(_ value: T, into destination: UnsafeMutableRawBufferPointer,
                                              at offset: Int) {
        precondition(offset >= 0 && offset <= destination.count - MemoryLayout<T>.size,
                     "store of \(MemoryLayout<T>.size) bytes at \(offset) in a buffer of \(destination.count)")
        destination.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
    }

    // MARK: Keys and search heads

    /// A key's address for the search methods: its base address, or for an empty key (which
    /// may have none) an address that is never read, as no comparison reads past `count`.
    @inline(__always)
    static func keyAddress(_ key: UnsafeRawBufferPointer) -> UnsafeRawPointer {
        key.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
    }

    /// Up to 8 bytes at `start` as a big-endian integer, zero-padded: order-preserving (x ≤ y ⇒
    /// head(x) ≤ head(y)). Reads `min(count, 8)` bytes; none when `count ≤ 0`.
    @inline(__always)
    static func head(_ start: UnsafeRawPointer, count: Int) -> UInt64 {
        if count >= 8 { return UInt64(bigEndian: start.loadUnaligned(as: UInt64.self)) }
        var word: UInt64 = 0
        var i = 0
        while i < 8 {
            word = word << 8 | (i < count ? UInt64(start.load(fromByteOffset: i, as: UInt8.self)) : 0)
            i += 1
        }
        return word
    }

    /// The search heads of cells `first..<count` (``heads``) and the length of the prefix every
    /// key of the page shares, which they start after. The words below `first` are left
    /// unset: a search starts at `first`. Each key is read within its own cell: the prefix is
    /// at most the shorter of the first and last keys, and every key between them in order
    /// starts with it, so it is no longer than any of them.
    func makeSearchHeads(from first: Int) -> (heads: UnsafeMutablePointer<UInt64>, prefix: Int) {
        let total = count
        let low = key(first)
        let high = key(total - 1)
        var prefix = 0
        let limit = min(low.count, high.count)
        while prefix < limit
            && low.baseAddress!.load(fromByteOffset: prefix, as: UInt8.self)
            == high.baseAddress!.load(fromByteOffset: prefix, as: UInt8.self) {
            prefix += 1
        }
        let words = UnsafeMutablePointer<UInt64>.allocate(capacity: total)
        for i in first..<total {
            let cellKey = key(i)
            words[i] = Page.head(cellKey.baseAddress! + prefix, count: cellKey.count - prefix)
        }
        return (words, prefix)
    }

    /// ``lowerBound(_:_:)`` over ``heads`` (`count` words, set for `first..<count`): the prefix
    /// is compared once, then integers; only cells whose heads tie with the key's are compared
    /// in full. Every index read is in `first..<count`.
    @inline(__always)
    func lowerBoundByHeads(_ heads: UnsafeMutablePointer<UInt64>, _ key: UnsafeRawPointer,
                           _ keyCount: Int) -> (index: Int, found: Bool) {
        let total = count
        let first = isLeaf ? 0 : 1
        let header = cellHeaderLength
        let prefix = headPrefix
        if prefix > 0 {
            let compared = min(prefix, keyCount)
            let order = compareKeys(key, compared, address(at: slot(first) + header), compared)
            if order < 0 || (order == 0 && keyCount < prefix) { return (first, false) }
            if order > 0 { return (total, false) }
        }
        let keyHead = Page.head(key + prefix, count: keyCount - prefix)
        var low = first
        var high = total
        while low < high {
            let mid = (low &+ high) &>> 1
            if heads[mid] < keyHead { low = mid &+ 1 } else { high = mid }
        }
        var i = low
        while i < total && heads[i] == keyHead {
            let cellOffset = slot(i)
            let order = compareKeys(address(at: cellOffset + header), keyLength(at: cellOffset), key, keyCount)
            if order < 0 { i += 1 } else { return (i, order == 0) }
        }
        return (i, false)
    }
}
