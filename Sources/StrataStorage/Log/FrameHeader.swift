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
        let unpadded = Format.frameHeaderLength + storedLength
        return UInt64((unpadded + Format.frameAlignment - 1) & ~(Format.frameAlignment - 1))
    }

    /// `crc32c(header bytes 0..<36 ‖ u64le(offset))` over the first 36 bytes of `header`. Mixing
    /// in the position makes a frame valid only where it was written: a spliced or misdirected
    /// copy of a valid frame (each of its own checksums intact) would otherwise be read as the
    /// page a parent points at.
    static func headerChecksum(_ header: UnsafeRawBufferPointer, at offset: UInt64) -> UInt32 {
        var position = offset.littleEndian
        let head = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: header[..<36]))
        return withUnsafeBytes(of: &position) { CRC32C.checksum($0, extending: head) }
    }

    /// Decodes the header of the frame at file offset `offset`, or returns `nil` when the bytes
    /// are not a valid frame header there (wrong magic, header checksum mismatch — which includes
    /// a frame written at another offset —, unknown type or flags, a compressed checkpoint,
    /// impossible lengths, a raw length above the type's ``FrameType/maxRawLength``).
    static func decode(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) -> FrameHeader? {
        guard bytes.count >= Format.frameHeaderLength else { return nil }
        // Every field lies in the 40 bytes checked above: the loads cannot fail.
        func field<T: FixedWidthInteger>(_ type: T.Type, at fieldOffset: Int) -> T? {
            ByteReader.loadLE(T.self, from: bytes, at: fieldOffset)
        }
        guard let magic = field(UInt32.self, at: 0), let typeByte = field(UInt8.self, at: 4),
              let flags = field(UInt8.self, at: 5), let reserved = field(UInt16.self, at: 6),
              let stored = field(UInt32.self, at: 8), let raw = field(UInt32.self, at: 12),
              let txid = field(UInt64.self, at: 16), let durableEnd = field(UInt64.self, at: 24),
              let payloadChecksum = field(UInt32.self, at: 32), let crc = field(UInt32.self, at: 36)
        else { return nil }
        guard magic == Format.frameMagic else { return nil }
        guard headerChecksum(bytes, at: offset) == crc else { return nil }
        guard let type = FrameType(rawValue: typeByte) else { return nil }
        guard flags & ~Format.flagCompressed == 0, reserved == 0 else { return nil }
        // Checkpoint frames are never compressed (FORMAT.md §3).
        guard type != .checkpoint || flags & Format.flagCompressed == 0 else { return nil }
        if flags & Format.flagCompressed == 0 {
            guard raw == stored else { return nil }
        } else {
            // LZ4 never expands by more than 255x; larger claims are corrupt.
            guard stored > 0, UInt64(raw) <= UInt64(stored) * 255 else { return nil }
        }
        guard UInt64(raw) <= UInt64(type.maxRawLength) else { return nil }
        return FrameHeader(
            type: type, flags: flags, storedLength: stored, rawLength: raw,
            txid: txid, durableEnd: durableEnd, payloadChecksum: payloadChecksum)
    }
}
