/// Leaf deltas (FORMAT.md §4, "Leaf deltas"): a leaf stored as the few cells that changed since
/// a page frame's image, so a checkpoint after scattered updates encodes and writes a few cells
/// per leaf instead of compressing every changed leaf whole (decision 102).
///
/// A delta is always against a whole image (never another delta), and holds every change since
/// that image: a leaf read from a delta remembers the keys the delta changed (``deltaKeys``), and
/// its next delta changes those keys again, with whatever changed since.
/// What a leaf delta of a changed leaf changes: the stored form of the written leaf it was copied
/// from. Only that leaf's base image (its own frame, or its delta's base) and the keys its delta
/// changed are kept, not the leaf itself, so a changed leaf pins no second page (the builds the
/// tests run keep the page too, to check each delta against it).
struct LeafOrigin {
    /// The page frame (offset, length) of the image a delta changes.
    var base: (offset: UInt64, length: UInt64)
    /// The keys the written leaf's own delta changed (empty when it was written whole).
    var keys: [UInt8]
    #if DEBUG
    /// The written leaf itself.
    var page: Page
    #endif

    /// The origin of a leaf copied from `written`, a leaf a checkpoint wrote (or read).
    init(of written: Page) {
        base = written.deltaBase.offset != 0 ? written.deltaBase : (written.diskAddress, written.diskLength)
        keys = written.deltaKeys
        #if DEBUG
        page = written
        #endif
    }
}

extension Page {
    /// What a checkpoint writes for a leaf stored as a delta.
    struct LeafDelta {
        /// The page frame (offset, length) of the image the delta changes.
        var base: (offset: UInt64, length: UInt64)
        /// The keys the delta changes, ascending, each a u16 length and the bytes.
        var keys: [UInt8]
    }

    /// Records that the leaf's cell for `key` was put or deleted (a leaf with an origin only:
    /// ``changedKeys``). A leaf changed that often since it was written (half a page of keys,
    /// repeats included) is written whole instead: its origin is dropped, which also ends the
    /// recording, so a hot leaf costs one append per change until then and nothing after.
    @inline(__always)
    func noteChanged(_ key: UnsafeRawBufferPointer) {
        guard origin != nil else { return }
        // One allocation for the few keys a leaf usually collects, not one per doubling.
        if changedKeys.capacity == 0 { changedKeys.reserveCapacity(pageSize / 16) }
        Page.appendKey(key, to: &changedKeys)
        if changedKeys.count > pageSize / 2 { forgetOrigin() }
    }

    /// Drops the origin: the leaf changed too much (a split, a merge) to be written as a delta.
    func forgetOrigin() {
        origin = nil
        changedKeys = []
    }

    /// The payload of a leaf delta that makes its ``origin``'s base image into this leaf,
    /// written into `payload`; nil when the leaf should be written whole: no origin, nothing
    /// changed, or a payload longer than `limit` bytes.
    ///
    /// The keys are those the leaf's changes since its origin touched (``changedKeys``, recorded
    /// by the tree as it puts and deletes: no walk over the leaf's cells), with those the
    /// origin's own delta changed, so the result changes every key whose cell may differ from the base
    /// image's. Each key is written as this leaf holds it: its cell (a put), or a delete when
    /// the leaf no longer holds it.
    func leafDelta(limit: Int, into payload: inout [UInt8]) -> LeafDelta? {
        guard isLeaf, let origin, origin.base.offset != 0 else { return nil }
        let base = origin.base
        let keys = Page.mergeKeyLists(Page.sortedUniqueKeys(changedKeys), origin.keys)
        // The keys alone past the limit: the payload would be too.
        guard !keys.isEmpty, keys.count <= limit else { return nil }
        #if DEBUG
        // Every cell that differs from the origin's must be among the keys: the tree records
        // each put and delete, and a split or merge drops the origin. Checked by comparing the
        // two leaves cell by cell in the builds the tests run.
        let differing = changedKeysByComparing(with: origin.page)
        Page.forEachKey(in: differing) { key in
            var listed = false
            Page.forEachKey(in: keys) { if compareKeys($0, key) == 0 { listed = true } }
            precondition(listed, "a changed cell of a leaf was not recorded for its delta")
        }
        #endif

        payload.removeAll(keepingCapacity: true)
        Page.appendLE(base.offset, to: &payload)
        Page.appendLE(UInt16(0), to: &payload)
        var changes = 0
        var failed = false
        Page.forEachKey(in: keys) { key in
            guard !failed else { return }
            let (index, found) = lowerBound(key)
            if found {
                let cell = slot(index)
                payload.append(Format.deltaPut)
                payload.append(contentsOf: bytes(at: cell, count: cellSize(at: cell)))
            } else {
                payload.append(Format.deltaDelete)
                Page.appendKey(key, to: &payload)
            }
            changes += 1
            if payload.count > limit || changes > Int(UInt16.max) { failed = true }
        }
        guard !failed else { return nil }
        payload[8] = UInt8(truncatingIfNeeded: changes)
        payload[9] = UInt8(truncatingIfNeeded: changes >> 8)
        return LeafDelta(base: base, keys: keys)
    }

    #if DEBUG
    /// The keys whose cells differ between this leaf and `origin` (present in one only, or with
    /// other bytes), ascending: what ``changedKeys`` must cover.
    func changedKeysByComparing(with origin: Page) -> [UInt8] {
        var changed: [UInt8] = []
        var i = 0, j = 0
        while i < origin.count || j < count {
            if j == count {
                Page.appendKey(origin.key(i), to: &changed)
                i += 1
            } else if i == origin.count {
                Page.appendKey(key(j), to: &changed)
                j += 1
            } else if sameCellBytes(j, as: origin, i) {
                i += 1
                j += 1
            } else {
                let order = compareKeys(origin.key(i), key(j))
                if order < 0 {
                    Page.appendKey(origin.key(i), to: &changed)
                    i += 1
                } else if order > 0 {
                    Page.appendKey(key(j), to: &changed)
                    j += 1
                } else {
                    Page.appendKey(key(j), to: &changed)
                    i += 1
                    j += 1
                }
            }
        }
        return changed
    }
    #endif

    #if DEBUG
    /// Whether leaf cell `index` of this page and cell `otherIndex` of `other` are the same bytes
    /// (the same key and value).
    @inline(__always)
    private func sameCellBytes(_ index: Int, as other: Page, _ otherIndex: Int) -> Bool {
        let at = slot(index), otherAt = other.slot(otherIndex)
        let size = cellSize(at: at)
        return size == other.cellSize(at: otherAt) && bytesEqual(at: at, other, at: otherAt, count: size)
    }
    #endif

    /// The leaf the leaf delta frame at `offset`, whose raw payload is `payload`, reads as:
    /// `base` (the leaf decoded from the frame the payload names) with the changes applied, and
    /// the keys they change. The changes are checked as they are read (op, key lengths, each
    /// change whole, keys strictly ascending, nothing after the last), and the resulting leaf is
    /// decoded as an image stored at `offset`, so every rule of a page holds for it: it fits the
    /// page, values are inline exactly when they fit a quarter page, overflow offsets lie before
    /// the delta frame.
    static func applyLeafDelta(_ payload: UnsafeRawBufferPointer, to base: Page, pageSize: Int,
                               offset: UInt64) throws -> (page: Page, keys: [UInt8]) {
        var reader = ByteReader(payload, fileOffset: offset, context: "leaf delta")
        _ = try reader.u64()
        let changeCount = Int(try reader.u16())
        guard changeCount >= 1 else { throw reader.fail("no changes") }
        /// A change: where its key lies in `payload`, and its cell's (nil for a delete).
        var changes: [(key: Range<Int>, cell: Range<Int>?)] = []
        // A change takes at least 4 bytes: a claimed count reserves no more than the payload holds.
        changes.reserveCapacity(min(changeCount, payload.count / 4))
        for _ in 0..<changeCount {
            let op = try reader.u8()
            guard op == Format.deltaPut || op == Format.deltaDelete else { throw reader.fail("unknown op \(op)") }
            let cellStart = reader.position
            let keyLength = Int(try reader.u16())
            guard keyLength >= 1, keyLength <= StoreLimits.maxKeyLength else {
                throw reader.fail("key length \(keyLength)")
            }
            var valueLength = 0
            if op == Format.deltaPut {
                let info = try reader.u32()
                valueLength = info & Format.overflowBit != 0
                    ? Format.overflowReferenceLength : try reader.count(info & ~Format.overflowBit, "value length")
            }
            let keyStart = reader.position
            try reader.skip(keyLength)
            try reader.skip(valueLength)
            let key = keyStart..<(keyStart + keyLength)
            if let previous = changes.last?.key,
               compareKeys(UnsafeRawBufferPointer(rebasing: payload[previous]),
                           UnsafeRawBufferPointer(rebasing: payload[key])) >= 0 {
                throw reader.fail("keys of changes not in ascending order")
            }
            changes.append((key, op == Format.deltaPut ? cellStart..<reader.position : nil))
        }
        guard reader.isAtEnd else { throw reader.fail("\(reader.remaining) bytes after the last change") }

        // The leaf's cells in key order: the base's, replaced, added or removed by the changes.
        enum Cell { case base(Int), delta(Range<Int>) }
        var cells: [Cell] = []
        cells.reserveCapacity(base.count + changes.count)
        var i = 0
        for change in changes {
            let key = UnsafeRawBufferPointer(rebasing: payload[change.key])
            while i < base.count && compareKeys(base.key(i), key) < 0 {
                cells.append(.base(i))
                i += 1
            }
            if i < base.count && compareKeys(base.key(i), key) == 0 { i += 1 }
            if let cell = change.cell { cells.append(.delta(cell)) }
        }
        while i < base.count {
            cells.append(.base(i))
            i += 1
        }
        func size(_ cell: Cell) -> Int {
            switch cell {
            case .base(let index): return base.cellSize(at: base.slot(index))
            case .delta(let range): return range.count
            }
        }
        let cellBytes = cells.reduce(0) { $0 + size($1) }
        let imageLength = Format.pageHeaderLength + 2 * cells.count + cellBytes
        guard imageLength <= pageSize else {
            throw StrataError.corrupt("leaf delta: the leaf it makes is \(imageLength) bytes, over the page", offset: offset)
        }
        // The image as a checkpoint would write it (``encodeImage(into:)``): cells packed from
        // the end of the page down, in slot order.
        var image: [UInt8] = []
        image.reserveCapacity(imageLength)
        image.append(Format.pageKindLeaf)
        image.append(0)
        appendLE(UInt16(cells.count), to: &image)
        appendLE(UInt16(pageSize - cellBytes), to: &image)
        appendLE(UInt16(0), to: &image)
        var top = pageSize
        for cell in cells {
            top -= size(cell)
            appendLE(UInt16(top), to: &image)
        }
        for cell in cells.reversed() {
            switch cell {
            case .base(let index):
                let at = base.slot(index)
                image.append(contentsOf: base.bytes(at: at, count: base.cellSize(at: at)))
            case .delta(let range):
                image.append(contentsOf: UnsafeRawBufferPointer(rebasing: payload[range]))
            }
        }
        let page = try image.withUnsafeBytes { try decodeImage($0, pageSize: pageSize, offset: offset) }
        var keys: [UInt8] = []
        for change in changes { appendKey(UnsafeRawBufferPointer(rebasing: payload[change.key]), to: &keys) }
        return (page, keys)
    }

    // MARK: Key lists

    /// Appends `key` to a key list (or a delete change): its u16 length, then its bytes.
    static func appendKey(_ key: UnsafeRawBufferPointer, to list: inout [UInt8]) {
        list.append(UInt8(truncatingIfNeeded: key.count))
        list.append(UInt8(truncatingIfNeeded: key.count >> 8))
        list.append(contentsOf: key)
    }

    /// Calls `body` with each key of a key list, in order.
    static func forEachKey(in list: [UInt8], _ body: (UnsafeRawBufferPointer) -> Void) {
        list.withUnsafeBytes { bytes in
            var at = 0
            while at + 2 <= bytes.count {
                let length = Int(bytes[at]) | Int(bytes[at + 1]) << 8
                body(UnsafeRawBufferPointer(rebasing: bytes[(at + 2)..<(at + 2 + length)]))
                at += 2 + length
            }
        }
    }

    /// A key list's keys ascending, each once. A list already ascending (a batch that changes a
    /// leaf's rows in key order) is returned as it is, after one pass.
    static func sortedUniqueKeys(_ list: [UInt8]) -> [UInt8] {
        let ascending = list.withUnsafeBytes { bytes -> Bool in
            var previous: UnsafeRawBufferPointer?
            var at = 0
            while at + 2 <= bytes.count {
                let length = Int(bytes[at]) | Int(bytes[at + 1]) << 8
                let key = UnsafeRawBufferPointer(rebasing: bytes[(at + 2)..<(at + 2 + length)])
                if let previous, compareKeys(previous, key) >= 0 { return false }
                previous = key
                at += 2 + length
            }
            return true
        }
        if ascending { return list }
        var ranges: [Range<Int>] = []
        list.withUnsafeBytes { bytes in
            var at = 0
            while at + 2 <= bytes.count {
                let length = Int(bytes[at]) | Int(bytes[at + 1]) << 8
                ranges.append((at + 2)..<(at + 2 + length))
                at += 2 + length
            }
        }
        if ranges.count < 2 { return list }
        var sorted: [UInt8] = []
        sorted.reserveCapacity(list.count)
        list.withUnsafeBytes { bytes in
            ranges.sort { compareKeys(UnsafeRawBufferPointer(rebasing: bytes[$0]), UnsafeRawBufferPointer(rebasing: bytes[$1])) < 0 }
            var previous: UnsafeRawBufferPointer?
            for range in ranges {
                let key = UnsafeRawBufferPointer(rebasing: bytes[range])
                if let previous, compareKeys(previous, key) == 0 { continue }
                appendKey(key, to: &sorted)
                previous = key
            }
        }
        return sorted
    }

    /// The ascending union of two ascending key lists.
    static func mergeKeyLists(_ first: [UInt8], _ second: [UInt8]) -> [UInt8] {
        if second.isEmpty { return first }
        if first.isEmpty { return second }
        var merged: [UInt8] = []
        merged.reserveCapacity(first.count + second.count)
        first.withUnsafeBytes { a in
            second.withUnsafeBytes { b in
                var i = 0, j = 0
                func key(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UnsafeRawBufferPointer {
                    let length = Int(bytes[at]) | Int(bytes[at + 1]) << 8
                    return UnsafeRawBufferPointer(rebasing: bytes[(at + 2)..<(at + 2 + length)])
                }
                while i < a.count || j < b.count {
                    if j == b.count {
                        merged.append(contentsOf: UnsafeRawBufferPointer(rebasing: a[i...]))
                        break
                    }
                    if i == a.count {
                        merged.append(contentsOf: UnsafeRawBufferPointer(rebasing: b[j...]))
                        break
                    }
                    let left = key(a, i), right = key(b, j)
                    let order = compareKeys(left, right)
                    if order <= 0 {
                        appendKey(left, to: &merged)
                        i += 2 + left.count
                        if order == 0 { j += 2 + right.count }
                    } else {
                        appendKey(right, to: &merged)
                        j += 2 + right.count
                    }
                }
            }
        }
        return merged
    }

    /// Appends `value` little-endian.
    static func appendLE<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        var v = value.littleEndian
        withUnsafeBytes(of: &v) { bytes.append(contentsOf: $0) }
    }
}
