import CCRC32C

/// CRC32C (Castagnoli), the checksum of every header slot and frame (FORMAT.md, "Checksums").
///
/// Hardware `crc32` on x86-64, slicing-by-8 tables elsewhere (decision 2).
/// The C code reads exactly the `count` bytes of the buffer it is lent, during the call.
@usableFromInline
enum CRC32C {
    @inlinable
    static func checksum(_ bytes: UnsafeRawBufferPointer, extending crc: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return crc }
        return strata_crc32c_extend(crc, base, bytes.count)
    }

    static func checksum(_ bytes: [UInt8], extending crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, extending: crc) }
    }

    static var isHardwareAccelerated: Bool { strata_crc32c_is_hardware() != 0 }
}
