/// One store file as readers see it: the file, its page size, and the cache of decompressed
/// pages read from it. A compaction creates a new `PageFile`; snapshots taken before it keep
/// the old one (and its open descriptor) alive until they end.
final class PageFile: @unchecked Sendable {
    let file: any StorageFile
    let path: String
    let pageSize: Int
    let cache: PageCache
    /// The durable length of the file when it was opened (read-only opens read no further).
    let closeOnDeinit: Bool

    init(file: any StorageFile, path: String, pageSize: Int, cacheBudget: Int, closeOnDeinit: Bool = true) {
        self.file = file
        self.path = path
        self.pageSize = pageSize
        self.cache = PageCache(budgetBytes: cacheBudget, pageSize: pageSize)
        self.closeOnDeinit = closeOnDeinit
    }

    deinit { if closeOnDeinit { file.close() } }

    /// Reads the frame at `offset`, checks both checksums and the type, and returns the header
    /// and the raw (decompressed) payload.
    func readFrame(at offset: UInt64, expecting type: FrameType, maxRawLength: Int) throws -> (FrameHeader, [UInt8]) {
        try FrameReader(file: file).read(at: offset, expecting: type, maxRawLength: maxRawLength)
    }

    /// The page at `offset`, from the cache or the file. `level` is the level its parent
    /// expects: a page at any other level is corruption (a descent that does not descend).
    @inline(__always)
    func page(at offset: UInt64, level: Int) throws -> Page {
        if let cached = cache.get(offset) {
            guard cached.level == level else { throw levelMismatch(cached, level, offset) }
            return cached
        }
        return try load(offset, level: level)
    }

    /// Child `i` of the branch page `parent` (a frame's offset in its cell, not a page held in
    /// memory), from the cache or the file, one level down. `readingAhead`: the caller walks
    /// leaves in key order, so a miss reads ahead (``readAheadBytes``).
    ///
    /// Every page a descent puts into the cache was checked against a parent cell that leads to
    /// it: its first key at or above the cell's key, its last key below the next cell's
    /// (FORMAT.md §4), so a misplaced page is `corrupt` rather than a lookup that misses or a
    /// walk out of order. The check costs two key comparisons per page read from the file and
    /// nothing on a cache hit; a page reached later from another parent cell — two cells
    /// sharing a child — is `check`'s to find.
    @inline(__always)
    func child(of parent: Page, at i: Int, readingAhead: Bool) throws -> Page {
        let offset = parent.childAddress(i)
        let level = parent.level - 1
        if let cached = cache.get(offset) {
            guard cached.level == level else { throw levelMismatch(cached, level, offset) }
            return cached
        }
        return try missedChild(of: parent, at: i, readingAhead: readingAhead)
    }

    @inline(never)
    private func missedChild(of parent: Page, at i: Int, readingAhead: Bool) throws -> Page {
        readingAhead ? try readChildrenAhead(of: parent, from: i) : try loadChild(of: parent, at: i)
    }

    /// A child read from the file: decoded, checked against its parent cell, then cached.
    private func loadChild(of parent: Page, at i: Int) throws -> Page {
        let offset = parent.childAddress(i)
        let page = try read(offset, level: parent.level - 1)
        if let what = boundsViolation(page, under: parent, at: i) { throw StrataError.corrupt(what, offset: offset) }
        cache.insert(page, at: offset)
        return page
    }

    /// Why `page` cannot be child `i` of `parent`, or `nil` when its keys lie within the cell's bounds.
    private func boundsViolation(_ page: Page, under parent: Page, at i: Int) -> String? {
        let n = page.count
        // A branch's cell 0 has no key: its first key is cell 1's.
        let first = page.isLeaf ? 0 : 1
        guard n > first else { return nil }
        if i > 0 && compareKeys(page.key(first), parent.key(i)) < 0 {
            return "page holds keys below the separator of the parent cell \(i) that leads to it"
        }
        if i + 1 < parent.count && compareKeys(page.key(n - 1), parent.key(i + 1)) >= 0 {
            return "page holds keys at or above the separator after the parent cell \(i) that leads to it"
        }
        return nil
    }

    /// A miss on child `i` of `parent` during a walk in key order: one read of ``readAheadBytes``
    /// from the child's frame on, caching the child and each following frame that is the
    /// parent's next child (leaves that one checkpoint or compaction wrote lie next to each
    /// other in key order), each checked against its own cell. Anything else ends the read-ahead.
    private func readChildrenAhead(of parent: Page, from i: Int) throws -> Page {
        let offset = parent.childAddress(i)
        let level = parent.level - 1
        guard offset >= Format.logStart else { return try loadChild(of: parent, at: i) }
        let chunk = PageFile.readAheadBytes
        var requested: Page?
        try withUnsafeTemporaryAllocation(byteCount: chunk + pageSize, alignment: 16) { buffer in
            let data = UnsafeMutableRawBufferPointer(rebasing: buffer[..<chunk])
            let n = try file.read(into: data, at: offset)
            let raw = UnsafeMutableRawBufferPointer(rebasing: buffer[chunk...])
            var at = 0
            var j = i
            while at < n && j < parent.count {
                let frameOffset = offset + UInt64(at)
                guard j == i || (parent.children[j] == nil && parent.childAddress(j) == frameOffset) else { break }
                // Frames after the requested one are a bonus: any doubt, and the loop stops.
                guard let found = try? FrameValidator.validate(
                    UnsafeRawBufferPointer(rebasing: data[at..<n]), at: frameOffset, expecting: .page,
                    maxRawLength: pageSize, decompressingInto: raw) else { break }
                let (header, image) = found
                if j == i || cache.get(frameOffset) == nil {
                    guard let page = try? Page.decodeImage(image, pageSize: pageSize, offset: frameOffset),
                          page.level == level, boundsViolation(page, under: parent, at: j) == nil else { break }
                    page.diskAddress = frameOffset
                    page.diskLength = header.frameLength
                    if j == i { requested = page }
                    cache.insert(page, at: frameOffset)
                }
                at += Int(header.frameLength)
                j += 1
            }
        }
        // Anything wrong with the requested frame itself is reported by the plain path.
        return try requested ?? loadChild(of: parent, at: i)
    }

    /// How much a sequential leaf read fetches at once.
    static let readAheadBytes = 256 << 10

    /// A cache miss on a page no parent cell bounds (a root): read it, cache it.
    @inline(never)
    private func load(_ offset: UInt64, level: Int) throws -> Page {
        let page = try read(offset, level: level)
        cache.insert(page, at: offset)
        return page
    }

    /// The page at `offset`, read from the file and decoded; not cached. One `pread` covers the
    /// frame header and the largest payload a page frame can have (a page image never
    /// compresses to more than its LZ4 bound), so a page costs one system call, one
    /// decompression and one copy into its page. A leaf stored as a leaf delta costs a second
    /// read, of its base (FORMAT.md §4, "Leaf deltas").
    private func read(_ offset: UInt64, level: Int) throws -> Page {
        switch try readFrame(offset, level: level, delta: true) {
        case .page(let page): return page
        case .delta(let payload, let frameLength):
            return try resolveDelta(payload, at: offset, frameLength: frameLength)
        }
    }

    /// What a page frame or a leaf delta frame holds.
    private enum StoredPage {
        case page(Page)
        /// A leaf delta's raw payload and its frame's length.
        case delta([UInt8], frameLength: UInt64)
    }

    /// The frame at `offset` read and checked: a page frame decoded (its page at `level`; with
    /// search heads unless the caller only merges it into another page), or, when `delta`
    /// allows one, a leaf delta frame's payload (where a leaf belongs).
    private func readFrame(_ offset: UInt64, level: Int, delta: Bool, searchHeads: Bool = true) throws -> StoredPage {
        guard offset >= Format.logStart else {
            throw StrataError.corrupt("child offset \(offset) inside the header", offset: offset)
        }
        let readLength = Int(FrameHeader.frameLength(storedLength: max(pageSize, LZ4.compressBound(pageSize))))
        return try withUnsafeTemporaryAllocation(byteCount: readLength + pageSize, alignment: 16) { buffer in
            let frame = UnsafeMutableRawBufferPointer(rebasing: buffer[..<readLength])
            let n = try file.read(into: frame, at: offset)
            let raw = UnsafeMutableRawBufferPointer(rebasing: buffer[readLength...])
            let header: FrameHeader
            let image: UnsafeRawBufferPointer
            do throws(FrameDefect) {
                (header, image) = try FrameValidator.validate(
                    UnsafeRawBufferPointer(rebasing: frame[..<n]), at: offset, expecting: nil,
                    maxRawLength: pageSize, decompressingInto: raw)
            } catch {
                throw StrataError.corrupt("page frame: \(error)", offset: offset)
            }
            switch header.type {
            case .page:
                break
            case .leafDelta where delta:
                guard level == 0 else {
                    throw StrataError.corrupt("a leaf delta where a page at level \(level) belongs", offset: offset)
                }
                return .delta([UInt8](image), frameLength: header.frameLength)
            default:
                let what = header.type == .leafDelta ? "a leaf delta as the base of a leaf delta" : "a \(header.type) frame"
                throw StrataError.corrupt("\(what) where a page belongs", offset: offset)
            }
            let page = try Page.decodeImage(image, pageSize: pageSize, offset: offset, searchHeads: searchHeads)
            guard page.level == level else { throw levelMismatch(page, level, offset) }
            page.diskAddress = offset
            page.diskLength = header.frameLength
            return .page(page)
        }
    }

    /// The leaf a leaf delta frame at `offset` reads as: its base page frame read (a leaf image,
    /// before the delta, itself no delta) and the delta's changes applied.
    private func resolveDelta(_ payload: [UInt8], at offset: UInt64, frameLength: UInt64) throws -> Page {
        let baseOffset = try payload.withUnsafeBytes { bytes in
            var reader = ByteReader(bytes, fileOffset: offset, context: "leaf delta")
            return try reader.u64()
        }
        guard baseOffset >= Format.logStart, baseOffset < offset,
              baseOffset & UInt64(Format.frameAlignment - 1) == 0 else {
            throw StrataError.corrupt("leaf delta: base offset \(baseOffset)", offset: offset)
        }
        guard case .page(let base) = try readFrame(baseOffset, level: 0, delta: false, searchHeads: false) else {
            throw StrataError.corrupt("leaf delta: base at \(baseOffset) is not a page frame", offset: offset)
        }
        let baseLength = base.diskLength
        let (page, keys) = try payload.withUnsafeBytes {
            try Page.applyLeafDelta($0, to: base, pageSize: pageSize, offset: offset)
        }
        page.diskAddress = offset
        page.diskLength = frameLength + baseLength
        page.deltaBase = (baseOffset, baseLength)
        page.deltaKeys = keys
        return page
    }

    private func levelMismatch(_ page: Page, _ level: Int, _ offset: UInt64) -> StrataError {
        .corrupt("page at level \(page.level) where level \(level) was expected", offset: offset)
    }

    /// The value stored in the overflow frame at `offset`; it must be `length` bytes.
    func overflowValue(at offset: UInt64, length: Int) throws -> [UInt8] {
        let (_, value) = try readFrame(at: offset, expecting: .overflow, maxRawLength: StoreLimits.maxValueLength)
        guard value.count == length else {
            throw StrataError.corrupt("overflow value is \(value.count) bytes, its leaf says \(length)", offset: offset)
        }
        return value
    }
}
