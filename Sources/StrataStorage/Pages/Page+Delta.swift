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

/// Leaf deltas (FORMAT.md §4, "Leaf deltas"): a leaf stored as the few cells that changed since
/// a page frame's image, so a checkpoint after scattered updates encodes and writes a few cells
/// per leaf instead of compressing every changed leaf whole (decision 102).
///
/// A delta is always against a whole image (never another delta), and holds every change since
/// that image: a leaf read from a delta remembers the keys the delta changed (``deltaKeys``), and
/// its next delta changes those keys again, with whatever changed since.
extension Page {
    /// What a checkpoint writes for a leaf stored as a delta.
    struct LeafDelta {
        /// The page frame (offset, length) of the image the delta changes.
        var base: (offset: UInt64, length: UInt64)
        /// The keys the delta changes, ascending, each a u16 length and the bytes.
        var keys: [UInt8]
    }

    /// Records that the leaf's cell for `key` was put or deleted (a leaf with an origin only:
    /// ``changeLog``). A leaf changed that often since it was written (half a page of keys,
    /// repeats included) is written whole instead: its origin is dropped, which also ends the
    /// recording, so a hot leaf costs one append per change until then and nothing after.
    @inline(__always)
    func noteChanged(_ key: UnsafeRawBufferPointer) {
        guard origin != nil else { return }
        if changeLog?.append(key, after: changedLength) != true {
            changeLog = ChangedKeyLog.grown(changeLog, keeping: changedLength, toAppend: key)
        }
        changedLength += 2 + key.count
        if changedLength > pageSize / 2 { forgetOrigin() }
    }

    /// Drops the origin and the keys recorded since it: the leaf changed too much (a split, a
    /// merge) to be written as a delta, or it was written.
    func forgetOrigin() {
        origin = nil
        changeLog = nil
        changedLength = 0
    }

    /// This version's recorded keys (``changeLog``), a key list.
    var changedKeys: [UInt8] {
        guard let changeLog, changedLength > 0 else { return [] }
        return changeLog.prefix(changedLength)
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
        withUnsafeBytes(of: base.offset.littleEndian) { payload.append(contentsOf: $0) }
        payload += [0, 0]  // the change count, set below
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

    /// The leaf the leaf delta frame at `offset`, whose raw payload is `payload`, reads as: a new
    /// leaf merged in one pass from `base` (the leaf decoded, without search heads, from the
    /// frame the payload names) and the changes, both in key order — each base cell before the
    /// next change's key copied, the cell of that key left out, a put's cell appended — so no
    /// leaf between the base and the result exists, and a refused delta leaves `base` as it was
    /// (decision 103). Returned with the keys the changes change. Each change is checked as it
    /// is read, as decoding checks a cell: op, key length, key order (strictly ascending), the
    /// whole change inside the payload, a put's value inline exactly when its cell fits a
    /// quarter page, an overflow reference in the log, aligned and before the delta frame; and
    /// nothing after the last change. The base's cells were checked
    /// by its decoding, a result over the page is corruption, and the leaf's keys are in order
    /// because both inputs are: every rule of a page holds for the result.
    static func applyLeafDelta(_ payload: UnsafeRawBufferPointer, to base: Page, pageSize: Int,
                               offset: UInt64) throws -> (leaf: Page, keys: [UInt8]) {
        var reader = ByteReader(payload, fileOffset: offset, context: "leaf delta")
        _ = try reader.u64()
        let changeCount = Int(try reader.u16())
        guard changeCount >= 1 else { throw reader.fail("no changes") }
        guard base.isLeaf, base.heads == nil else {
            throw StrataError.corrupt("leaf delta: its base is not a leaf", offset: offset)
        }
        let inlineLimit = pageSize / 4
        let leaf = Page(pageSize: pageSize, kind: Format.pageKindLeaf, level: 0, owner: 0)
        let over = StrataError.corrupt("leaf delta: the leaf it makes is over the page", offset: offset)
        // Appends base cell `i`, or throws when the leaf has no room for it and its slot.
        func copyBaseCell(_ i: Int) throws {
            guard leaf.contiguousFree >= base.cellSize(at: base.slot(i)) + 2 else { throw over }
            leaf.appendCell(from: base, at: i)
        }
        // The keys' list is no longer than the payload: one allocation.
        var keys: [UInt8] = []
        keys.reserveCapacity(payload.count)
        var previous: Range<Int>?
        let baseCount = base.count
        var next = 0
        for _ in 0..<changeCount {
            let op = try reader.u8()
            guard op == Format.deltaPut || op == Format.deltaDelete else { throw reader.fail("unknown op \(op)") }
            let keyLength = Int(try reader.u16())
            guard keyLength >= 1, keyLength <= StoreLimits.maxKeyLength else {
                throw reader.fail("key length \(keyLength)")
            }
            var overflowLength: Int?
            var storedLength = 0
            if op == Format.deltaPut {
                let info = try reader.u32()
                let length = Int(info & ~Format.overflowBit)
                let overflow = info & Format.overflowBit != 0
                guard length <= StoreLimits.maxValueLength else { throw reader.fail("value length \(length)") }
                // Inline exactly when the cell fits a quarter page (FORMAT.md §4).
                guard (Format.leafCellHeader + keyLength + length <= inlineLimit) != overflow else {
                    throw reader.fail("a \(length)-byte value with a \(keyLength)-byte key stored "
                                      + (overflow ? "in an overflow frame" : "inline"))
                }
                overflowLength = overflow ? length : nil
                storedLength = overflow ? Format.overflowReferenceLength : length
            }
            let keyRange = reader.position..<(reader.position + keyLength)
            let key = try reader.bytes(keyLength)
            let value = try reader.bytes(storedLength)
            if let previous, compareKeys(UnsafeRawBufferPointer(rebasing: payload[previous]), key) >= 0 {
                throw reader.fail("keys of changes not in ascending order")
            }
            previous = keyRange
            if overflowLength != nil {
                // Eight bytes read above: the load cannot fail.
                let at = ByteReader.loadLE(UInt64.self, from: value, at: 0) ?? 0
                guard at >= Format.logStart, at < offset, at & UInt64(Format.frameAlignment - 1) == 0 else {
                    throw reader.fail("overflow offset \(at)")
                }
            }
            // The base's cells below the key, then its cell of the key skipped: the change
            // replaces or deletes it.
            while next < baseCount {
                let order = compareKeys(base.key(next), key)
                if order > 0 { break }
                if order < 0 { try copyBaseCell(next) }
                next += 1
                if order == 0 { break }
            }
            if op == Format.deltaPut {
                let size = Page.leafCellSize(keyLength: keyLength, valueLength: storedLength)
                guard leaf.contiguousFree >= size + 2 else { throw over }
                let at = leaf.appendSlot(cellSize: size)
                leaf.writeLeafCell(at: at, key: key, value: value, overflowLength: overflowLength)
            }
            appendKey(key, to: &keys)
        }
        guard reader.isAtEnd else { throw reader.fail("\(reader.remaining) bytes after the last change") }
        while next < baseCount {
            try copyBaseCell(next)
            next += 1
        }
        leaf.buildSearchHeads()
        return (leaf, keys)
    }

    // MARK: Key lists

    /// Appends `key` to a key list (or a delete change): its u16 length, then its bytes.
    static func appendKey(_ key: UnsafeRawBufferPointer, to list: inout [UInt8]) {
        list.append(UInt8(truncatingIfNeeded: key.count))
        list.append(UInt8(truncatingIfNeeded: key.count >> 8))
        list.append(contentsOf: key)
    }

    /// Where the key a key list holds at `at` (its u16 length's position) lies in `list`; the
    /// next key's length follows it. Key lists are the engine's own (``appendKey(_:to:)``).
    @inline(__always)
    static func keyRange(in list: UnsafeRawBufferPointer, at: Int) -> Range<Int> {
        let length = Int(list[at]) | Int(list[at + 1]) << 8
        return (at + 2)..<(at + 2 + length)
    }

    /// Calls `body` with each key of a key list, in order.
    static func forEachKey(in list: [UInt8], _ body: (UnsafeRawBufferPointer) -> Void) {
        list.withUnsafeBytes { bytes in
            var at = 0
            while at < bytes.count {
                let range = keyRange(in: bytes, at: at)
                body(UnsafeRawBufferPointer(rebasing: bytes[range]))
                at = range.upperBound
            }
        }
    }

    /// A key list's keys ascending, each once. A list already ascending (a batch that changes a
    /// leaf's rows in key order) is returned as it is, after one pass.
    static func sortedUniqueKeys(_ list: [UInt8]) -> [UInt8] {
        var ascending = true
        var previous: UnsafeRawBufferPointer?
        forEachKey(in: list) { key in
            if let previous, compareKeys(previous, key) >= 0 { ascending = false }
            previous = key
        }
        if ascending { return list }
        var sorted: [UInt8] = []
        sorted.reserveCapacity(list.count)
        list.withUnsafeBytes { bytes in
            var ranges: [Range<Int>] = []
            var at = 0
            while at < bytes.count {
                ranges.append(keyRange(in: bytes, at: at))
                at = ranges[ranges.count - 1].upperBound
            }
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
                    UnsafeRawBufferPointer(rebasing: bytes[keyRange(in: bytes, at: at)])
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
}
