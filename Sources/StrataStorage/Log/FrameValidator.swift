/// The one frame validator (FORMAT.md §3): every reader — page loads, read-ahead, recovery,
/// `check` — validates frames through these steps, so "valid frame" means one thing.
///
/// 1. ``FrameHeader/decode(_:at:)``: magic, header checksum over the header and the offset,
///    type, flags, reserved bytes, length rules.
/// 2. ``FrameHeader/check(expecting:maxRawLength:available:)``: the type and size the reader
///    expects, and that the whole frame (padding included) lies in the bytes available.
/// 3. ``FrameHeader/checkPayload(_:decompressingInto:)``: the payload checksum and, when
///    compressed, LZ4 decoding to exactly `raw length` bytes.
enum FrameValidator {
    /// All three steps over a frame held in memory: `bytes` are what was read from file offset
    /// `offset` on (the frame first, possibly more after it). Returns the header and the raw
    /// payload (borrowed from `bytes` or `raw`).
    static func validate(_ bytes: UnsafeRawBufferPointer, at offset: UInt64, expecting type: FrameType?,
                         maxRawLength: Int, decompressingInto raw: UnsafeMutableRawBufferPointer)
        throws(FrameDefect) -> (FrameHeader, UnsafeRawBufferPointer) {
        let (frameHeader, stored) = try header(bytes, at: offset, expecting: type, maxRawLength: maxRawLength)
        return (frameHeader, try frameHeader.checkPayload(stored, decompressingInto: raw))
    }

    /// Steps 1 and 2 and the payload checksum of step 3, not the LZ4 decoding: for a frame read
    /// again whose decoding was checked before (a compaction's copy of a leaf it inspected).
    /// Returns the header and the stored payload (borrowed from `bytes`).
    static func validateStored(_ bytes: UnsafeRawBufferPointer, at offset: UInt64, expecting type: FrameType?,
                               maxRawLength: Int) throws(FrameDefect) -> (FrameHeader, UnsafeRawBufferPointer) {
        let (frameHeader, stored) = try header(bytes, at: offset, expecting: type, maxRawLength: maxRawLength)
        guard CRC32C.checksum(stored) == frameHeader.payloadChecksum else { throw .payloadChecksum }
        return (frameHeader, stored)
    }

    /// Steps 1 and 2: the header, and the stored payload it puts inside `bytes`.
    private static func header(_ bytes: UnsafeRawBufferPointer, at offset: UInt64, expecting type: FrameType?,
                               maxRawLength: Int) throws(FrameDefect) -> (FrameHeader, UnsafeRawBufferPointer) {
        let headerLength = Format.frameHeaderLength
        guard bytes.count >= headerLength,
              let frameHeader = FrameHeader.decode(UnsafeRawBufferPointer(rebasing: bytes[..<headerLength]), at: offset)
        else {
            throw .invalidHeader
        }
        try frameHeader.check(expecting: type, maxRawLength: maxRawLength, available: UInt64(bytes.count))
        // `check` put the whole frame inside `bytes`.
        let stored = UnsafeRawBufferPointer(
            rebasing: bytes[headerLength..<(headerLength + Int(frameHeader.storedLength))])
        return (frameHeader, stored)
    }
}
