/// Converting between a ``Page`` and the bytes of its page image (FORMAT.md, "Page image").
///
/// The image is the page with its free gap removed: `header, slots, cells`, where the cells
/// are packed in slot order and the slots are the offsets they will have once the image is
/// expanded back to `pageSize` bytes (cells end at `pageSize`).
extension Page {
    /// Writes the compacted image into `out` (at least `pageSize` bytes) and returns its
    /// length. Does not modify the page, so it is safe on committed pages that readers share.
    func encodeImage(into out: UnsafeMutableRawPointer) -> Int {
        let n = count
        let slotsEnd = Format.pageHeaderLength + 2 * n
        var cellBytes = 0
        for i in 0..<n { cellBytes += cellSize(at: slot(i)) }
        let imageLength = slotsEnd + cellBytes
        out.copyMemory(from: buffer, byteCount: Format.pageHeaderLength)
        // Cells are laid out from the end of the image downwards, in slot order.
        var top = pageSize
        var writeAt = imageLength
        for i in 0..<n {
            let off = slot(i)
            let size = cellSize(at: off)
            top -= size
            writeAt -= size
            (out + writeAt).copyMemory(from: buffer + off, byteCount: size)
            out.storeBytes(of: UInt16(top).littleEndian, toByteOffset: Format.pageHeaderLength + 2 * i, as: UInt16.self)
        }
        out.storeBytes(of: UInt16(top).littleEndian, toByteOffset: 4, as: UInt16.self)
        out.storeBytes(of: UInt16(0), toByteOffset: 6, as: UInt16.self)
        return imageLength
    }

    /// Decodes and validates an image read from the frame at `offset` (FORMAT.md §4). Throws
    /// `corrupt` for anything a well-formed page cannot contain; never traps. Checked: kind and
    /// level, a fragmented count of 0, the slot array and every cell inside the page, key lengths (1...1024; a branch's
    /// cell 0 empty), keys strictly ascending, the inline rule of leaf values, and every child or
    /// overflow offset: in the log, 8-aligned, before this frame (a checkpoint or compaction
    /// writes children and values first), and no child twice.
    static func decodeImage(_ image: UnsafeRawBufferPointer, pageSize: Int, offset: UInt64) throws -> Page {
        func bad(_ what: String) -> StrataError { .corrupt("page image: \(what)", offset: offset) }
        guard image.count >= Format.pageHeaderLength, image.count <= pageSize else {
            throw bad("length \(image.count) outside \(Format.pageHeaderLength)...\(pageSize)")
        }
        let kind = image[0]
        let level = Int(image[1])
        guard kind == Format.pageKindLeaf || kind == Format.pageKindBranch else { throw bad("unknown kind \(kind)") }
        guard (kind == Format.pageKindLeaf) == (level == 0), level < Format.maxTreeHeight else {
            throw bad("kind \(kind) at level \(level)")
        }
        let n = Int(image.loadUnaligned(fromByteOffset: 2, as: UInt16.self).littleEndian)
        let slotsEnd = Format.pageHeaderLength + 2 * n
        guard slotsEnd <= image.count else { throw bad("\(n) slots do not fit") }
        let cellStart = pageSize - (image.count - slotsEnd)
        guard Int(image.loadUnaligned(fromByteOffset: 4, as: UInt16.self).littleEndian) == cellStart else {
            throw bad("cell start disagrees with image length")
        }
        // An image is always packed (FORMAT.md §4): a fragmented count says bytes were forged.
        guard image.loadUnaligned(fromByteOffset: 6, as: UInt16.self) == 0 else { throw bad("fragmented bytes in an image") }
        if kind == Format.pageKindBranch && n == 0 { throw bad("empty branch page") }
        let page = Page(pageSize: pageSize, kind: kind, level: level, owner: 0)
        page.buffer.copyMemory(from: image.baseAddress!, byteCount: slotsEnd)
        (page.buffer + cellStart).copyMemory(from: image.baseAddress! + slotsEnd, byteCount: image.count - slotsEnd)
        page.fragmented = 0
        // Every slot must point at a whole cell inside the cell area. One pass over the slots,
        // reading the buffer directly: this runs for every page read from the file.
        let isLeaf = kind == Format.pageKindLeaf
        let header = isLeaf ? Format.leafCellHeader : Format.branchCellHeader
        let inlineLimit = pageSize / 4
        let base = UnsafeRawPointer(page.buffer)
        @inline(__always) func u16(_ at: Int) -> Int { Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt16.self))) }
        @inline(__always) func isFrameOffset(_ at: UInt64) -> Bool {
            at >= Format.logStart && at < offset && at & UInt64(Format.frameAlignment - 1) == 0
        }
        var previous: (key: UnsafeRawPointer, count: Int)?
        for i in 0..<n {
            let off = u16(Format.pageHeaderLength + 2 * i)
            guard off >= cellStart, off + header <= pageSize else { throw bad("slot \(i) offset \(off) out of range") }
            let k = u16(off)
            guard k <= StoreLimits.maxKeyLength, isLeaf ? k > 0 : (k > 0) == (i > 0) else {
                throw bad("slot \(i) key length \(k)")
            }
            let cellEnd: Int
            if isLeaf {
                let info = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: off + 2, as: UInt32.self))
                let length = Int(info & ~Format.overflowBit)
                let overflow = info & Format.overflowBit != 0
                guard length <= StoreLimits.maxValueLength else { throw bad("slot \(i) value length \(length)") }
                // Inline exactly when the cell fits a quarter page (FORMAT.md §4): a writer's
                // split relies on it.
                guard (Format.leafCellHeader + k + length <= inlineLimit) != overflow else {
                    throw bad("slot \(i): a \(length)-byte value with a \(k)-byte key stored \(overflow ? "in an overflow frame" : "inline")")
                }
                cellEnd = off + header + k + (overflow ? Format.overflowReferenceLength : length)
                guard cellEnd <= pageSize else { throw bad("slot \(i) cell runs past the page") }
                if overflow {
                    let at = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: off + header + k, as: UInt64.self))
                    guard isFrameOffset(at) else { throw bad("slot \(i) overflow offset \(at)") }
                }
            } else {
                cellEnd = off + header + k
                guard cellEnd <= pageSize else { throw bad("slot \(i) cell runs past the page") }
                let at = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: off + 2, as: UInt64.self))
                guard isFrameOffset(at) else { throw bad("slot \(i) child offset \(at)") }
            }
            if k > 0 {
                let key = base + off + header
                if let p = previous, compareKeys(p.key, p.count, key, k) >= 0 {
                    throw bad("keys of slots \(i - 1) and \(i) not in ascending order")
                }
                previous = (key, k)
            }
        }
        if !isLeaf {
            if n > 1 {
                // Two cells sharing a child would show its entries twice: no child twice.
                var children = (0..<n).map { page.childAddress($0) }
                children.sort()
                for i in 1..<n where children[i] == children[i - 1] { throw bad("child \(children[i]) referenced twice") }
            }
            page.children = Array(repeating: nil, count: n)
        }
        page.buildSearchHeads()
        return page
    }
}
