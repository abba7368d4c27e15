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
        case .wrongType(let type, let expected): return "frame type \(type) where \(expected) was expected"
        case .tooLarge(let raw, let limit): return "frame payload \(raw) bytes, limit \(limit)"
        case .truncated(let length, let available):
            return "frame of \(length) bytes runs past the end of the file (\(available) bytes there)"
        case .payloadChecksum: return "frame payload checksum mismatch"
        case .decompression: return "frame payload does not decompress to its raw length"
        }
    }
}
