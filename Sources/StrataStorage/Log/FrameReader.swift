/// Why the bytes at an offset are not a valid frame of the kind a reader expected
/// (FORMAT.md §3). Readers turn it into ``StrataError/corrupt(_:offset:)`` or, while looking for
/// the end of the log, into "the log ends here".
enum FrameDefect: Error, Equatable, CustomStringConvertible {
    /// Magic, header checksum (which covers the frame's own offset), type, flags, reserved bytes
    /// or the length rules: not a frame header at this offset.
    case invalidHeader
    /// A valid frame, of another type than the reader expected.
    case wrongType(FrameType, expected: FrameType)
    /// A raw payload longer than the reader accepts for this kind of frame.
    case tooLarge(rawLength: UInt32, limit: Int)
    /// The frame runs past the end of the file (or of the bytes read).
    case truncated(frameLength: UInt64, available: UInt64)
    /// The stored payload does not match its checksum.
    case payloadChecksum
    /// A compressed payload that is not one LZ4 block of exactly `raw length` bytes.
    case decompression

    var description: String {
        switch self {
        case .invalidHeader: return "invalid frame header"
        case .wrongType(let t, let expected): return "frame type \(t) where \(expected) was expected"
        case .tooLarge(let raw, let limit): return "frame payload \(raw) bytes, limit \(limit)"
        case .truncated(let length, let available): return "frame of \(length) bytes runs past the end of the file (\(available) bytes there)"
        case .payloadChecksum: return "frame payload checksum mismatch"
        case .decompression: return "frame payload does not decompress to its raw length"
        }
    }
}

/// The one frame validator (FORMAT.md §3): every reader — page loads, read-ahead, recovery,
/// `check` — validates frames through these steps, so "valid frame" means one thing.
///
/// 1. ``FrameHeader/decode(_:at:)``: magic, header checksum over the header and the offset,
///    type, flags, reserved bytes, length rules.
/// 2. ``FrameHeader/check(expecting:maxRawLength:available:)``: the type and size the reader
///    expects, and that the whole frame (padding included) lies in the bytes available.
/// 3. ``FrameHeader/checkPayload(_:decompressingInto:)``: the payload checksum and, when
///    compressed, LZ4 decoding to exactly `raw length` bytes.
extension FrameHeader {
    /// Step 2. `available` is how many bytes the file (or the buffer read) holds from the
    /// frame's offset on.
    func check(expecting type: FrameType?, maxRawLength: Int, available: UInt64) throws(FrameDefect) {
        if let type, self.type != type { throw .wrongType(self.type, expected: type) }
        guard UInt64(rawLength) <= UInt64(max(0, maxRawLength)) else { throw .tooLarge(rawLength: rawLength, limit: maxRawLength) }
        guard frameLength <= available else { throw .truncated(frameLength: frameLength, available: available) }
    }

    /// Step 3. `stored` is the frame's `stored length` payload bytes; a compressed payload is
    /// decoded into the front of `raw` (at least `raw length` bytes). Returns the raw payload:
    /// `stored` itself, or the decoded bytes in `raw`.
    func checkPayload(_ stored: UnsafeRawBufferPointer, decompressingInto raw: UnsafeMutableRawBufferPointer) throws(FrameDefect) -> UnsafeRawBufferPointer {
        guard stored.count == Int(storedLength) else { throw .truncated(frameLength: frameLength, available: UInt64(stored.count)) }
        guard CRC32C.checksum(stored) == payloadChecksum else { throw .payloadChecksum }
        guard isCompressed else { return stored }
        let rawCount = Int(rawLength)
        guard raw.count >= rawCount else { throw .tooLarge(rawLength: rawLength, limit: raw.count) }
        let out = UnsafeMutableRawBufferPointer(rebasing: raw[..<rawCount])
        guard LZ4.decompress(stored, into: out) else { throw .decompression }
        return UnsafeRawBufferPointer(out)
    }
}

enum FrameValidator {
    /// All three steps over a frame held in memory: `bytes` are what was read from file offset
    /// `offset` on (the frame first, possibly more after it). Returns the header and the raw
    /// payload (borrowed from `bytes` or `raw`).
    static func validate(_ bytes: UnsafeRawBufferPointer, at offset: UInt64, expecting type: FrameType?,
                         maxRawLength: Int, decompressingInto raw: UnsafeMutableRawBufferPointer) throws(FrameDefect) -> (FrameHeader, UnsafeRawBufferPointer) {
        guard bytes.count >= Format.frameHeaderLength,
              let h = FrameHeader.decode(UnsafeRawBufferPointer(rebasing: bytes[..<Format.frameHeaderLength]), at: offset) else {
            throw .invalidHeader
        }
        try h.check(expecting: type, maxRawLength: maxRawLength, available: UInt64(bytes.count))
        let stored = UnsafeRawBufferPointer(rebasing: bytes[Format.frameHeaderLength..<(Format.frameHeaderLength + Int(h.storedLength))])
        return (h, try h.checkPayload(stored, decompressingInto: raw))
    }
}

/// Reads single frames from a file with full validation. Shared by page loads, recovery and
/// `check`.
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
            guard (try? h.check(expecting: nil, maxRawLength: Int(UInt32.max), available: limit - offset)) != nil else { return nil }
            return h
        }
    }

    /// Reads the payload of a frame whose header ``header(at:limit:)`` returned; `nil` if its
    /// checksum fails or it does not decompress to its raw length.
    func payload(of h: FrameHeader, at offset: UInt64) throws -> [UInt8]? {
        if case .success(let bytes) = try checkedPayload(of: h, at: offset) { return bytes }
        return nil
    }

    /// The payload, or the defect that makes the frame invalid. Throws only I/O errors.
    func checkedPayload(of h: FrameHeader, at offset: UInt64) throws -> Result<[UInt8], FrameDefect> {
        let start = offset.addingReportingOverflow(UInt64(Format.frameHeaderLength))
        guard !start.overflow else { return .failure(.invalidHeader) }
        var stored = [UInt8](repeating: 0, count: Int(h.storedLength))
        let n = try stored.withUnsafeMutableBytes { try file.read(into: $0, at: start.partialValue) }
        guard n == stored.count else { return .failure(.truncated(frameLength: h.frameLength, available: UInt64(Format.frameHeaderLength + n))) }
        var raw = [UInt8](repeating: 0, count: h.isCompressed ? Int(h.rawLength) : 0)
        let checked: FrameDefect? = stored.withUnsafeBytes { s in
            raw.withUnsafeMutableBytes { r in
                do throws(FrameDefect) {
                    _ = try h.checkPayload(s, decompressingInto: r)
                    return nil
                } catch {
                    return error
                }
            }
        }
        if let checked { return .failure(checked) }
        return .success(h.isCompressed ? raw : stored)
    }

    /// Reads and validates the frame at `offset`, which must be of `type` with at most
    /// `maxRawLength` raw payload bytes; throws `corrupt` otherwise.
    func read(at offset: UInt64, expecting type: FrameType, maxRawLength: Int) throws -> (FrameHeader, [UInt8]) {
        let size = try file.size()
        guard let h = try header(at: offset, limit: size) else {
            throw StrataError.corrupt(FrameDefect.invalidHeader.description, offset: offset)
        }
        do throws(FrameDefect) {
            try h.check(expecting: type, maxRawLength: maxRawLength, available: size - offset)
        } catch {
            throw StrataError.corrupt(error.description, offset: offset)
        }
        switch try checkedPayload(of: h, at: offset) {
        case .success(let payload): return (h, payload)
        case .failure(let defect): throw StrataError.corrupt(defect.description, offset: offset)
        }
    }
}
