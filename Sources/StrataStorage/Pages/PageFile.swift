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
            while at + Format.frameHeaderLength <= n {
                guard let h = FrameHeader.decode(UnsafeRawBufferPointer(rebasing: data[at..<at + Format.frameHeaderLength]), at: offset + UInt64(at)),
                      h.type == .page, Int(h.rawLength) <= pageSize,
                      Int(h.frameLength) <= n - at else { break }
                let frameOffset = offset + UInt64(at)
                let payload = UnsafeRawBufferPointer(rebasing: data[at + Format.frameHeaderLength..<at + Format.frameHeaderLength + Int(h.storedLength)])
                // Frames after the requested one are a bonus: any doubt, and the loop stops.
                guard CRC32C.checksum(payload) == h.payloadChecksum else { break }
                if at == 0 || cache.get(frameOffset) == nil {
                    var image = payload
                    if h.isCompressed {
                        let out = UnsafeMutableRawBufferPointer(rebasing: raw[..<Int(h.rawLength)])
                        guard LZ4.decompress(payload, into: out) else { break }
                        image = UnsafeRawBufferPointer(out)
                    }
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
        let maxStored = max(pageSize, LZ4.compressBound(pageSize))
        let readLength = Format.frameHeaderLength + maxStored
        return try withUnsafeTemporaryAllocation(byteCount: readLength + pageSize, alignment: 16) { buffer in
            let frame = UnsafeMutableRawBufferPointer(rebasing: buffer[..<readLength])
            let n = try file.read(into: frame, at: offset)
            guard let h = FrameHeader.decode(UnsafeRawBufferPointer(rebasing: frame[..<min(n, Format.frameHeaderLength)]), at: offset) else {
                throw StrataError.corrupt("invalid frame header", offset: offset)
            }
            guard h.type == .page else { throw StrataError.corrupt("frame type \(h.type) where a page was expected", offset: offset) }
            let stored = Int(h.storedLength)
            guard stored <= n - Format.frameHeaderLength, Int(h.rawLength) <= pageSize else {
                throw StrataError.corrupt("page frame of \(stored) bytes (\(h.rawLength) raw) runs past the file or the page size", offset: offset)
            }
            let payload = UnsafeRawBufferPointer(rebasing: frame[Format.frameHeaderLength..<Format.frameHeaderLength + stored])
            guard CRC32C.checksum(payload) == h.payloadChecksum else {
                throw StrataError.corrupt("frame payload checksum mismatch", offset: offset)
            }
            var image = payload
            if h.isCompressed {
                let raw = UnsafeMutableRawBufferPointer(rebasing: buffer[readLength..<readLength + Int(h.rawLength)])
                guard LZ4.decompress(payload, into: raw) else { throw StrataError.corrupt("page frame does not decompress", offset: offset) }
                image = UnsafeRawBufferPointer(raw)
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

/// Reads single frames with full validation. Shared by page loads, recovery and `check`.
struct FrameReader {
    let file: any StorageFile

    /// Reads and validates the header only; `nil` if the bytes are not a valid frame header
    /// or the frame would run past `limit`.
    func header(at offset: UInt64, limit: UInt64) throws -> FrameHeader? {
        // Offsets come from the file: compare without overflowing.
        guard offset <= limit, limit - offset >= UInt64(Format.frameHeaderLength) else { return nil }
        return try withUnsafeTemporaryAllocation(byteCount: Format.frameHeaderLength, alignment: 8) { buf in
            let n = try file.read(into: buf, at: offset)
            guard n == Format.frameHeaderLength, let h = FrameHeader.decode(UnsafeRawBufferPointer(buf), at: offset) else { return nil }
            guard h.frameLength <= limit - offset else { return nil }
            return h
        }
    }

    /// Reads the payload of a frame whose header is valid; `nil` if its checksum fails or it
    /// does not decompress to its raw length.
    func payload(of h: FrameHeader, at offset: UInt64) throws -> [UInt8]? {
        let stored = Int(h.storedLength)
        var storedBytes = [UInt8](repeating: 0, count: stored)
        let n = try storedBytes.withUnsafeMutableBytes { try file.read(into: $0, at: offset + UInt64(Format.frameHeaderLength)) }
        guard n == stored else { return nil }
        guard CRC32C.checksum(storedBytes) == h.payloadChecksum else { return nil }
        guard h.isCompressed else { return storedBytes }
        var raw = [UInt8](repeating: 0, count: Int(h.rawLength))
        let ok = storedBytes.withUnsafeBytes { src in raw.withUnsafeMutableBytes { LZ4.decompress(src, into: $0) } }
        return ok ? raw : nil
    }

    func read(at offset: UInt64, expecting type: FrameType, maxRawLength: Int) throws -> (FrameHeader, [UInt8]) {
        let size = try file.size()
        guard let h = try header(at: offset, limit: size) else {
            throw StrataError.corrupt("invalid frame header", offset: offset)
        }
        guard h.type == type else { throw StrataError.corrupt("frame type \(h.type) where \(type) was expected", offset: offset) }
        guard Int(h.rawLength) <= maxRawLength else {
            throw StrataError.corrupt("frame payload \(h.rawLength) bytes, limit \(maxRawLength)", offset: offset)
        }
        guard let payload = try payload(of: h, at: offset) else {
            throw StrataError.corrupt("frame payload checksum mismatch", offset: offset)
        }
        return (h, payload)
    }
}
