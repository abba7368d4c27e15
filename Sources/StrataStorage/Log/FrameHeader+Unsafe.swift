/// Raw access for ``FrameHeader``: writing a header's 40 bytes in place, in the buffer the frame
/// is assembled in (``LogWriter``'s scratch), so a commit's frame needs no second copy.
///
/// Invariants: `destination` is lent by the caller for the call and must hold the 40 header
/// bytes, checked here (`precondition`, once per frame); every store is at a fixed offset below
/// 40 (FORMAT.md §3), unaligned (`storeBytes` assumes none), little-endian. The header checksum
/// is computed over the bytes just stored, which lie in `destination` too. Reading a header
/// needs no raw access of its own: ``decode(_:at:)`` loads its fields through
/// ``ByteReader/loadLE(_:from:at:)``, which checks each load.
extension FrameHeader {
    /// Writes the header for a frame that will sit at file offset `offset` into the first 40
    /// bytes of `destination`; the header checksum covers that offset, so a valid frame copied
    /// or misdirected elsewhere fails it.
    func encode(into destination: UnsafeMutableRawBufferPointer, at offset: UInt64) {
        precondition(destination.count >= Format.frameHeaderLength,
                     "a frame header needs \(Format.frameHeaderLength) bytes, not \(destination.count)")
        destination.storeBytes(of: Format.frameMagic.littleEndian, toByteOffset: 0, as: UInt32.self)
        destination.storeBytes(of: type.rawValue, toByteOffset: 4, as: UInt8.self)
        destination.storeBytes(of: flags, toByteOffset: 5, as: UInt8.self)
        destination.storeBytes(of: UInt16(0), toByteOffset: 6, as: UInt16.self)
        destination.storeBytes(of: storedLength.littleEndian, toByteOffset: 8, as: UInt32.self)
        destination.storeBytes(of: rawLength.littleEndian, toByteOffset: 12, as: UInt32.self)
        destination.storeBytes(of: txid.littleEndian, toByteOffset: 16, as: UInt64.self)
        destination.storeBytes(of: durableEnd.littleEndian, toByteOffset: 24, as: UInt64.self)
        destination.storeBytes(of: payloadChecksum.littleEndian, toByteOffset: 32, as: UInt32.self)
        let checksum = FrameHeader.headerChecksum(UnsafeRawBufferPointer(destination), at: offset)
        destination.storeBytes(of: checksum.littleEndian, toByteOffset: 36, as: UInt32.self)
    }
}
