/// A frame's 40-byte header, decoded and validated (FORMAT.md, "Frames").
///
/// ```
///  0        4    5     6      8          12         16       24           32           36       40
///  | magic  |type|flags| 0 0  | stored   | raw      | txid   | durable    | payload    | header  |
///  | "SFRM" |    |     |      | length   | length   |        | end        | crc32c     | crc32c  |
/// ```
struct FrameHeader: Equatable {
    var type: FrameType
    var flags: UInt8
    var storedLength: UInt32
    var rawLength: UInt32
    var txid: UInt64
    /// The log offset up to which every byte was durable when this frame was written.
    var durableEnd: UInt64
    var payloadChecksum: UInt32

    var isCompressed: Bool { flags & Format.flagCompressed != 0 }

    /// Header + payload + padding to the next frame.
    var frameLength: UInt64 { FrameHeader.frameLength(storedLength: Int(storedLength)) }

    static func frameLength(storedLength: Int) -> UInt64 {
        let n = Format.frameHeaderLength + storedLength
        return UInt64((n + Format.frameAlignment - 1) & ~(Format.frameAlignment - 1))
    }

    /// Writes the header for a frame that will sit at file offset `offset`; the header
    /// checksum covers that offset, so a valid frame copied or misdirected elsewhere fails it.
    func encode(into p: UnsafeMutableRawPointer, at offset: UInt64) {
        p.storeBytes(of: Format.frameMagic.littleEndian, toByteOffset: 0, as: UInt32.self)
        p.storeBytes(of: type.rawValue, toByteOffset: 4, as: UInt8.self)
        p.storeBytes(of: flags, toByteOffset: 5, as: UInt8.self)
        p.storeBytes(of: UInt16(0), toByteOffset: 6, as: UInt16.self)
        p.storeBytes(of: storedLength.littleEndian, toByteOffset: 8, as: UInt32.self)
        p.storeBytes(of: rawLength.littleEndian, toByteOffset: 12, as: UInt32.self)
        p.storeBytes(of: txid.littleEndian, toByteOffset: 16, as: UInt64.self)
        p.storeBytes(of: durableEnd.littleEndian, toByteOffset: 24, as: UInt64.self)
        p.storeBytes(of: payloadChecksum.littleEndian, toByteOffset: 32, as: UInt32.self)
        p.storeBytes(of: FrameHeader.headerChecksum(UnsafeRawPointer(p), at: offset).littleEndian, toByteOffset: 36, as: UInt32.self)
    }

    /// `crc32c(header bytes 0..<36 ‖ u64le(offset))`. Mixing in the position makes a frame
    /// valid only where it was written: a spliced or misdirected copy of a valid frame (each
    /// of its own checksums intact) would otherwise be read as the page a parent points at.
    static func headerChecksum(_ p: UnsafeRawPointer, at offset: UInt64) -> UInt32 {
        var position = offset.littleEndian
        let head = CRC32C.checksum(p, count: 36)
        return withUnsafeBytes(of: &position) { CRC32C.checksum($0, extending: head) }
    }

    /// Decodes the header of the frame at file offset `offset`, or returns `nil` when the bytes
    /// are not a valid frame header there (wrong magic, header checksum mismatch — which includes
    /// a frame written at another offset —, unknown type or flags, a compressed checkpoint,
    /// impossible lengths, a raw length above the type's ``FrameType/maxRawLength``).
    static func decode(_ p: UnsafeRawBufferPointer, at offset: UInt64) -> FrameHeader? {
        guard p.count >= Format.frameHeaderLength else { return nil }
        guard p.loadUnaligned(fromByteOffset: 0, as: UInt32.self).littleEndian == Format.frameMagic else { return nil }
        let crc = p.loadUnaligned(fromByteOffset: 36, as: UInt32.self).littleEndian
        guard headerChecksum(p.baseAddress!, at: offset) == crc else { return nil }
        guard let type = FrameType(rawValue: p[4]) else { return nil }
        let flags = p[5]
        guard flags & ~Format.flagCompressed == 0, p[6] == 0, p[7] == 0 else { return nil }
        // Checkpoint frames are never compressed (FORMAT.md §3).
        guard type != .checkpoint || flags & Format.flagCompressed == 0 else { return nil }
        let stored = p.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian
        let raw = p.loadUnaligned(fromByteOffset: 12, as: UInt32.self).littleEndian
        if flags & Format.flagCompressed == 0 {
            guard raw == stored else { return nil }
        } else {
            // LZ4 never expands by more than 255x; larger claims are corrupt.
            guard stored > 0, UInt64(raw) <= UInt64(stored) * 255 else { return nil }
        }
        guard UInt64(raw) <= UInt64(type.maxRawLength) else { return nil }
        return FrameHeader(
            type: type, flags: flags, storedLength: stored, rawLength: raw,
            txid: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian,
            durableEnd: p.loadUnaligned(fromByteOffset: 24, as: UInt64.self).littleEndian,
            payloadChecksum: p.loadUnaligned(fromByteOffset: 32, as: UInt32.self).littleEndian)
    }
}
