/// Converting between a ``Page`` and the bytes of its page image (FORMAT.md, "Page image").
///
/// The image is the page with its free gap removed: `header, slots, cells`, where the cells
/// are packed in slot order and the slots are the offsets they will have once the image is
/// expanded back to `pageSize` bytes (cells end at `pageSize`).
extension Page {
    /// Writes the compacted image into the front of `out`, which must hold it (an image is never
    /// longer than its page: `pageSize` bytes always do), and returns it (borrowed from `out`).
    /// Does not modify the page, so it is safe on committed pages that readers share.
    func encodeImage(into out: UnsafeMutableRawBufferPointer) -> UnsafeRawBufferPointer {
        let total = count
        let slotsEnd = Format.pageHeaderLength + 2 * total
        var cellBytes = 0
        for i in 0..<total { cellBytes += cellSize(at: slot(i)) }
        let imageLength = slotsEnd + cellBytes
        copyBytes(at: 0, count: Format.pageHeaderLength, into: out, at: 0)
        // Cells are laid out from the end of the image downwards, in slot order.
        var top = pageSize
        var writeAt = imageLength
        for i in 0..<total {
            let cellOffset = slot(i)
            let size = cellSize(at: cellOffset)
            top -= size
            writeAt -= size
            copyBytes(at: cellOffset, count: size, into: out, at: writeAt)
            Page.storeLE(UInt16(top), into: out, at: Format.pageHeaderLength + 2 * i)
        }
        Page.storeLE(UInt16(top), into: out, at: 4)
        Page.storeLE(UInt16(0), into: out, at: 6)
        return UnsafeRawBufferPointer(rebasing: out[..<imageLength])
    }

    /// Decodes and validates an image read from the frame at `offset` (FORMAT.md §4). Throws
    /// `corrupt` for anything a well-formed page cannot contain; never traps. Checked: kind and
    /// level, a fragmented count of 0, the slot array and every cell inside the page, key
    /// lengths (1...1024; a branch's cell 0 empty), keys strictly ascending, the inline rule of
    /// leaf values, and every child or overflow offset: in the log, 8-aligned, before this
    /// frame (a checkpoint or compaction writes children and values first), and no child twice.
    ///
    /// The page's bytes are read only at offsets these checks have put inside the page (the
    /// invariant `Page+Unsafe.swift` relies on), and no other code sees the page before they
    /// all passed. `searchHeads: false` leaves the page without heads, for a caller that only
    /// reads it before dropping it (a leaf delta's base, merged into a new leaf).
    static func decodeImage(_ image: UnsafeRawBufferPointer, pageSize: Int, offset: UInt64,
                            searchHeads: Bool = true) throws -> Page {
        func bad(_ what: String) -> StrataError { .corrupt("page image: \(what)", offset: offset) }
        guard image.count >= Format.pageHeaderLength, image.count <= pageSize else {
            throw bad("length \(image.count) outside \(Format.pageHeaderLength)...\(pageSize)")
        }
        // The image holds the whole header (checked above): these reads cannot fail.
        var fields = ByteReader(image, fileOffset: offset, context: "page image")
        let kind = try fields.u8()
        let level = Int(try fields.u8())
        guard kind == Format.pageKindLeaf || kind == Format.pageKindBranch else { throw bad("unknown kind \(kind)") }
        guard (kind == Format.pageKindLeaf) == (level == 0), level < Format.maxTreeHeight else {
            throw bad("kind \(kind) at level \(level)")
        }
        let slotCount = Int(try fields.u16())
        let slotsEnd = Format.pageHeaderLength + 2 * slotCount
        guard slotsEnd <= image.count else { throw bad("\(slotCount) slots do not fit") }
        let cellStart = pageSize - (image.count - slotsEnd)
        guard Int(try fields.u16()) == cellStart else { throw bad("cell start disagrees with image length") }
        // An image is always packed (FORMAT.md §4): a fragmented count says bytes were forged.
        guard try fields.u16() == 0 else { throw bad("fragmented bytes in an image") }
        if kind == Format.pageKindBranch && slotCount == 0 { throw bad("empty branch page") }
        let page = Page(pageSize: pageSize, kind: kind, level: level, owner: 0)
        page.copyBytes(UnsafeRawBufferPointer(rebasing: image[..<slotsEnd]), to: 0)
        page.copyBytes(UnsafeRawBufferPointer(rebasing: image[slotsEnd...]), to: cellStart)
        page.fragmented = 0
        // Every slot must point at a whole cell inside the cell area. One pass over the slots,
        // reading the page's bytes directly: this runs for every page read from the file.
        let isLeaf = kind == Format.pageKindLeaf
        let header = isLeaf ? Format.leafCellHeader : Format.branchCellHeader
        let inlineLimit = pageSize / 4
        @inline(__always) func isFrameOffset(_ at: UInt64) -> Bool {
            at >= Format.logStart && at < offset && at & UInt64(Format.frameAlignment - 1) == 0
        }
        var previous: UnsafeRawBufferPointer?
        for i in 0..<slotCount {
            let cellOffset = page.slot(i)
            guard cellOffset >= cellStart, cellOffset + header <= pageSize else {
                throw bad("slot \(i) offset \(cellOffset) out of range")
            }
            let keyLength = page.keyLength(at: cellOffset)
            guard keyLength <= StoreLimits.maxKeyLength, isLeaf ? keyLength > 0 : (keyLength > 0) == (i > 0) else {
                throw bad("slot \(i) key length \(keyLength)")
            }
            let cellEnd: Int
            if isLeaf {
                let info = page.loadLE(UInt32.self, at: cellOffset + 2)
                let length = Int(info & ~Format.overflowBit)
                let overflow = info & Format.overflowBit != 0
                guard length <= StoreLimits.maxValueLength else { throw bad("slot \(i) value length \(length)") }
                // Inline exactly when the cell fits a quarter page (FORMAT.md §4): a writer's
                // split relies on it.
                guard (Format.leafCellHeader + keyLength + length <= inlineLimit) != overflow else {
                    let place = overflow ? "in an overflow frame" : "inline"
                    throw bad("slot \(i): a \(length)-byte value with a \(keyLength)-byte key stored \(place)")
                }
                cellEnd = cellOffset + header + keyLength + (overflow ? Format.overflowReferenceLength : length)
                guard cellEnd <= pageSize else { throw bad("slot \(i) cell runs past the page") }
                if overflow {
                    let at = page.loadLE(UInt64.self, at: cellOffset + header + keyLength)
                    guard isFrameOffset(at) else { throw bad("slot \(i) overflow offset \(at)") }
                }
            } else {
                cellEnd = cellOffset + header + keyLength
                guard cellEnd <= pageSize else { throw bad("slot \(i) cell runs past the page") }
                let at = page.loadLE(UInt64.self, at: cellOffset + 2)
                guard isFrameOffset(at) else { throw bad("slot \(i) child offset \(at)") }
            }
            if keyLength > 0 {
                let key = page.bytes(at: cellOffset + header, count: keyLength)
                if let previous, compareKeys(previous, key) >= 0 {
                    throw bad("keys of slots \(i - 1) and \(i) not in ascending order")
                }
                previous = key
            }
        }
        if !isLeaf {
            if slotCount > 1 {
                // Two cells sharing a child would show its entries twice: no child twice.
                var children = (0..<slotCount).map { page.childAddress($0) }
                children.sort()
                for i in 1..<slotCount where children[i] == children[i - 1] {
                    throw bad("child \(children[i]) referenced twice")
                }
            }
            page.children = Array(repeating: nil, count: slotCount)
        }
        if searchHeads { page.buildSearchHeads() }
        return page
    }
}
