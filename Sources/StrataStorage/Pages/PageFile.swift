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
        if let p = cache.get(offset) {
            guard p.level == level else { throw levelMismatch(p, level, offset) }
            return p
        }
        return try load(offset, level: level)
    }

    /// Like ``page(at:level:)``, for a caller walking leaves in key order (a cursor): on a miss
    /// it reads `readAheadBytes` at once and caches every page frame in them, because leaves
    /// written by one checkpoint or compaction lie next to each other in key order.
    func pageReadingAhead(at offset: UInt64, level: Int) throws -> Page {
        if let p = cache.get(offset) {
            guard p.level == level else { throw levelMismatch(p, level, offset) }
            return p
        }
        guard offset >= Format.logStart else { return try load(offset, level: level) }
        let chunk = PageFile.readAheadBytes
        var requested: Page?
        try withUnsafeTemporaryAllocation(byteCount: chunk + pageSize, alignment: 16) { buffer in
            let data = UnsafeMutableRawBufferPointer(rebasing: buffer[..<chunk])
            let n = try file.read(into: data, at: offset)
            let raw = UnsafeMutableRawBufferPointer(rebasing: buffer[chunk...])
            var at = 0
            while at < n {
                let frameOffset = offset + UInt64(at)
                // Frames after the requested one are a bonus: any doubt, and the loop stops.
                guard let found = try? FrameValidator.validate(
                    UnsafeRawBufferPointer(rebasing: data[at..<n]), at: frameOffset, expecting: .page,
                    maxRawLength: pageSize, decompressingInto: raw) else { break }
                let (h, image) = found
                if at == 0 || cache.get(frameOffset) == nil {
                    guard let page = try? Page.decodeImage(image, pageSize: pageSize, offset: frameOffset) else { break }
                    page.diskAddress = frameOffset
                    page.diskLength = h.frameLength
                    if at == 0 { requested = page }
                    cache.insert(page, at: frameOffset)
                }
                at += Int(h.frameLength)
            }
        }
        // Anything wrong with the requested frame itself is reported by the plain path.
        guard let page = requested else { return try load(offset, level: level) }
        guard page.level == level else { throw levelMismatch(page, level, offset) }
        return page
    }

    /// How much a sequential leaf read fetches at once.
    static let readAheadBytes = 256 << 10

    /// A cache miss: one `pread` covers the frame header and the largest payload a page frame
    /// can have (a page image never compresses to more than its LZ4 bound), so a page costs one
    /// system call, one decompression and one copy into its page.
    @inline(never)
    private func load(_ offset: UInt64, level: Int) throws -> Page {
        guard offset >= Format.logStart else { throw StrataError.corrupt("child offset \(offset) inside the header", offset: offset) }
        let readLength = Int(FrameHeader.frameLength(storedLength: max(pageSize, LZ4.compressBound(pageSize))))
        return try withUnsafeTemporaryAllocation(byteCount: readLength + pageSize, alignment: 16) { buffer in
            let frame = UnsafeMutableRawBufferPointer(rebasing: buffer[..<readLength])
            let n = try file.read(into: frame, at: offset)
            let raw = UnsafeMutableRawBufferPointer(rebasing: buffer[readLength...])
            let h: FrameHeader
            let image: UnsafeRawBufferPointer
            do throws(FrameDefect) {
                (h, image) = try FrameValidator.validate(UnsafeRawBufferPointer(rebasing: frame[..<n]), at: offset, expecting: .page,
                                                         maxRawLength: pageSize, decompressingInto: raw)
            } catch {
                throw StrataError.corrupt("page frame: \(error)", offset: offset)
            }
            let page = try Page.decodeImage(image, pageSize: pageSize, offset: offset)
            guard page.level == level else { throw levelMismatch(page, level, offset) }
            page.diskAddress = offset
            page.diskLength = h.frameLength
            cache.insert(page, at: offset)
            return page
        }
    }

    private func levelMismatch(_ p: Page, _ level: Int, _ offset: UInt64) -> StrataError {
        .corrupt("page at level \(p.level) where level \(level) was expected", offset: offset)
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
