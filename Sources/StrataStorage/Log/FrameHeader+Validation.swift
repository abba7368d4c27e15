/// Steps 2 and 3 of validating a frame (FORMAT.md §3), the steps after
/// ``FrameHeader/decode(_:at:)``; ``FrameValidator`` lists all three.
extension FrameHeader {
    /// Step 2. `available` is how many bytes the file (or the buffer read) holds from the
    /// frame's offset on.
    func check(expecting type: FrameType?, maxRawLength: Int, available: UInt64) throws(FrameDefect) {
        if let type, self.type != type { throw .wrongType(self.type, expected: type) }
        guard UInt64(rawLength) <= UInt64(max(0, maxRawLength)) else {
            throw .tooLarge(rawLength: rawLength, limit: maxRawLength)
        }
        guard frameLength <= available else { throw .truncated(frameLength: frameLength, available: available) }
    }

    /// Step 3. `stored` is the frame's `stored length` payload bytes; a compressed payload is
    /// decoded into the front of `raw` (at least `raw length` bytes). Returns the raw payload:
    /// `stored` itself, or the decoded bytes in `raw`.
    func checkPayload(_ stored: UnsafeRawBufferPointer, decompressingInto raw: UnsafeMutableRawBufferPointer)
        throws(FrameDefect) -> UnsafeRawBufferPointer {
        guard stored.count == Int(storedLength) else {
            throw .truncated(frameLength: frameLength, available: UInt64(stored.count))
        }
        guard CRC32C.checksum(stored) == payloadChecksum else { throw .payloadChecksum }
        guard isCompressed else { return stored }
        let rawCount = Int(rawLength)
        guard raw.count >= rawCount else { throw .tooLarge(rawLength: rawLength, limit: raw.count) }
        let out = UnsafeMutableRawBufferPointer(rebasing: raw[..<rawCount])
        guard LZ4.decompress(stored, into: out) else { throw .decompression }
        return UnsafeRawBufferPointer(out)
    }
}
