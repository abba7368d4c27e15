/// Recovery, step 4 (FORMAT.md §8): is what follows the end of the log a torn tail or damage?
extension Recovery {
    /// An invalid frame at `validEnd` ends the log only if nothing says the bytes there were
    /// durable: the header's durable end, or any later valid frame's durable end, beyond it.
    static func checkTail(reader: FrameReader, header: FileHeader, validEnd: UInt64, size: UInt64) throws {
        if header.durableEnd > validEnd {
            throw StrataError.corrupt("invalid frame before the durable end \(header.durableEnd) the header records", offset: validEnd)
        }
        let chunk = 1 << 20
        var buffer = [UInt8](repeating: 0, count: chunk + Format.frameHeaderLength)
        var base = validEnd + UInt64(Format.frameAlignment)
        while base < size {
            let n = try buffer.withUnsafeMutableBytes { try reader.file.read(into: $0, at: base) }
            if n < 4 { break }
            var i = 0
            while i + 4 <= min(n, chunk) {
                let magic = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: i, as: UInt32.self) }
                if magic == Format.frameMagic.littleEndian {
                    let at = base + UInt64(i)
                    if let h = try reader.header(at: at, limit: size), h.durableEnd > validEnd,
                       try reader.payload(of: h, at: at) != nil {
                        throw StrataError.corrupt("invalid frame followed by a valid frame written after it was durable (at \(at))", offset: validEnd)
                    }
                }
                i += Format.frameAlignment
            }
            base += UInt64(chunk)
        }
    }
}
