/// Recovery, step 4 (FORMAT.md §8): is what follows the end of the log a torn tail, damage,
/// or — for a read-only open beside a live writer — a frame being written right now?
extension Recovery {
    /// Decides about the bytes at `end.offset`, where replay stopped. They end the log (a torn
    /// tail: writes that never became durable) unless something says they had been synced:
    /// the header's durable end, or a valid frame after them whose durable end lies beyond
    /// them. Then the file is corrupt — except in one case a read-only open must allow for.
    ///
    /// A reader cannot know what another process is writing right now. A read-only open beside
    /// a live writer can find, at the end of the log, a frame that is not written yet (zeros of
    /// the writer's preallocation) or half written; by the time it looks further, the writer
    /// may have finished it, synced, and appended another frame that says so. That later frame
    /// was read after the bytes at the end were, so it proves nothing about what was there
    /// then — but it proves they are final now: the writer synced them before writing it. So
    /// the reader reads the frame at the end again. Valid now: it was being written, and the
    /// log this open sees ends before it (a committed prefix). Still invalid: corrupt.
    /// A writable open holds the write lock, so nothing is being written and no second look is
    /// taken.
    static func checkTail(reader: FrameReader, header: FileHeader, end: LogEnd, size: UInt64, readOnly: Bool) throws {
        let validEnd = end.offset
        // The header was read before the log: what it says was synced was there when replay read it.
        if header.durableEnd > validEnd {
            throw StrataError.corrupt("invalid frame before the durable end \(header.durableEnd) the header records",
                                      offset: validEnd)
        }
        guard let witness = try durableWitness(after: validEnd, size: size, reader: reader) else { return }
        if readOnly, end.reason == .invalidFrame, try frameIsValid(at: validEnd, reader: reader) { return }
        throw StrataError.corrupt(
            "invalid frame followed by a valid frame written after it was durable (at \(witness))", offset: validEnd)
    }

    /// The first valid frame after `validEnd` (at a multiple of 8, before `size`) whose durable
    /// end lies beyond `validEnd`, if any.
    private static func durableWitness(after validEnd: UInt64, size: UInt64, reader: FrameReader) throws -> UInt64? {
        let chunk = 1 << 20
        var buffer = [UInt8](repeating: 0, count: chunk + Format.frameHeaderLength)
        var base = validEnd + UInt64(Format.frameAlignment)
        while base < size {
            let n = try buffer.withUnsafeMutableBytes { try reader.file.read(into: $0, at: base) }
            if n < 4 { break }
            var i = 0
            while i + 4 <= min(n, chunk) {
                // The magic, little-endian, read from the array (bounds-checked).
                let magic = UInt32(buffer[i]) | UInt32(buffer[i + 1]) << 8 | UInt32(buffer[i + 2]) << 16
                    | UInt32(buffer[i + 3]) << 24
                if magic == Format.frameMagic {
                    let at = base + UInt64(i)
                    if let header = try reader.header(at: at, limit: size), header.durableEnd > validEnd,
                       try reader.payload(of: header, at: at) != nil {
                        return at
                    }
                }
                i += Format.frameAlignment
            }
            base += UInt64(chunk)
        }
        return nil
    }

    /// Whether the bytes at `offset` are a valid frame now (read afresh, against the file's
    /// size now).
    private static func frameIsValid(at offset: UInt64, reader: FrameReader) throws -> Bool {
        guard let header = try reader.header(at: offset, limit: try reader.file.size()) else { return false }
        return try reader.payload(of: header, at: offset) != nil
    }
}
