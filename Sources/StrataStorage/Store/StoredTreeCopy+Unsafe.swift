/// Raw access for ``StoredTreeCopy``: reading frames of the source file through its window.
///
/// Invariants:
/// - **Bounds.** A frame is read only from `window[offset - windowStart ..< windowCount]`,
///   after ``fillWindow(covering:)`` made `offset` lie in `windowStart ..< windowStart +
///   windowCount` with at least ``StoredTreeCopy/maxFrameLength`` bytes after it (fewer only
///   where the file ends); the validator then keeps every access inside those bytes (it checks
///   that the whole frame lies inside them before reading the payload).
/// - **Lifetime.** The buffers are arrays the copier owns; views of them are lent for one call
///   (`withUnsafe…` closures) and never kept. The copier is used by one thread (the writer
///   gate, or a backup's own snapshot).
extension StoredTreeCopy {
    struct CheckedFrame {
        var header: FrameHeader
        /// Where the frame starts in ``StoredTreeCopy/window``.
        var at: Int
    }

    /// The frame at `offset`, checked as a page read checks it (without `decompressing`: all
    /// but the LZ4 decoding, for a frame whose decoding was checked before); its bytes stay in
    /// the window until the next read.
    func checkedFrame(at offset: UInt64, decompressing: Bool = true) throws -> CheckedFrame {
        try fillWindow(covering: offset)
        let start = Int(offset - windowStart)
        let count = windowCount
        let pageSize = file.pageSize
        return try window.withUnsafeBytes { bytes in
            let frameBytes = UnsafeRawBufferPointer(rebasing: bytes[start..<count])
            let header: FrameHeader
            do throws(FrameDefect) {
                if decompressing {
                    header = try decompressed.withUnsafeMutableBytes { raw in
                        Result { () throws(FrameDefect) in
                            try FrameValidator.validate(frameBytes, at: offset, expecting: .page,
                                                        maxRawLength: pageSize, decompressingInto: raw).0
                        }
                    }.get()
                } else {
                    header = try FrameValidator.validateStored(frameBytes, at: offset, expecting: .page,
                                                               maxRawLength: pageSize).0
                }
            } catch {
                throw StrataError.corrupt("page frame: \(error)", offset: offset)
            }
            return CheckedFrame(header: header, at: start)
        }
    }

    /// Whether the frame at `offset` claims to be a leaf delta (its header valid there, of
    /// type 5): such a leaf is read through the page file, which resolves its base, and written
    /// as its image. Any other frame is left to ``checkedFrame(at:decompressing:)``.
    func isLeafDelta(at offset: UInt64) throws -> Bool {
        try fillWindow(covering: offset)
        let start = Int(offset - windowStart)
        let count = windowCount
        return window.withUnsafeBytes { bytes in
            guard count - start >= Format.frameHeaderLength else { return false }
            let head = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + Format.frameHeaderLength)])
            return FrameHeader.decode(head, at: offset)?.type == .leafDelta
        }
    }

    /// The leaf whose frame is at `offset`: the frame checked as a page read checks it
    /// (``checkedFrame(at:decompressing:)``), its image decoded (and checked) as a page read
    /// decodes it. Not cached.
    func checkedLeaf(at offset: UInt64) throws -> Page {
        let frame = try checkedFrame(at: offset)
        let pageSize = file.pageSize
        // The image: decompressed by the check, or the payload itself when stored raw.
        let page = frame.header.isCompressed
            ? try decompressed.withUnsafeBytes {
                try Page.decodeImage(UnsafeRawBufferPointer(rebasing: $0[..<Int(frame.header.rawLength)]),
                                     pageSize: pageSize, offset: offset)
            }
            : try withStoredPayload(of: frame) { try Page.decodeImage($0, pageSize: pageSize, offset: offset) }
        guard page.isLeaf else { throw StrataError.corrupt("a branch page where a leaf belongs", offset: offset) }
        return page
    }

    /// Calls `body` with the stored payload of `frame` (the last frame ``checkedFrame(at:)``
    /// returned).
    func withStoredPayload<R>(of frame: CheckedFrame, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        let start = frame.at + Format.frameHeaderLength
        let end = start + Int(frame.header.storedLength)
        precondition(start >= 0 && end <= windowCount, "payload \(start)..<\(end) outside the window's \(windowCount)")
        return try window.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
    }

    /// Reads the file into the window from `offset` on, unless the window already holds
    /// `offset` and a whole frame's worth after it (or everything up to the file's end).
    private func fillWindow(covering offset: UInt64) throws {
        let held = offset >= windowStart && offset < windowStart + UInt64(windowCount)
        let reachedEnd = windowCount < window.count
        if held && (reachedEnd || offset + UInt64(maxFrameLength) <= windowStart + UInt64(windowCount)) { return }
        let source = file.file
        let n = try window.withUnsafeMutableBytes { try source.read(into: $0, at: offset) }
        windowStart = offset
        windowCount = n
    }
}
