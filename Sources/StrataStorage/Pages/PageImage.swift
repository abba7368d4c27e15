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

    /// Decodes and validates an image read from the frame at `offset`. Throws `corrupt` for
    /// anything a well-formed page cannot contain; never traps.
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
        if kind == Format.pageKindBranch && n == 0 { throw bad("empty branch page") }
        let page = Page(pageSize: pageSize, kind: kind, level: level, owner: 0)
        page.buffer.copyMemory(from: image.baseAddress!, byteCount: slotsEnd)
        (page.buffer + cellStart).copyMemory(from: image.baseAddress! + slotsEnd, byteCount: image.count - slotsEnd)
        page.fragmented = 0
        // Every slot must point at a whole cell inside the cell area.
        let isLeaf = kind == Format.pageKindLeaf
        let header = isLeaf ? Format.leafCellHeader : Format.branchCellHeader
        for i in 0..<n {
            let off = page.slot(i)
            guard off >= cellStart, off + header <= pageSize else { throw bad("slot \(i) offset \(off) out of range") }
            let k = page.keyLength(at: off)
            guard k <= StoreLimits.maxKeyLength, isLeaf ? k > 0 : (k > 0 || i == 0) else {
                throw bad("slot \(i) key length \(k)")
            }
            if isLeaf {
                let (length, overflow) = page.valueInfo(i)
                guard length <= StoreLimits.maxValueLength else { throw bad("slot \(i) value length \(length)") }
                if !overflow && length > pageSize { throw bad("slot \(i) inline value length \(length)") }
            }
            guard off + page.cellSize(at: off) <= pageSize else { throw bad("slot \(i) cell runs past the page") }
        }
        if !isLeaf { page.children = Array(repeating: nil, count: n) }
        page.buildSearchHeads()
        return page
    }
}
