/// Appends little-endian integers, varints and byte strings to a growable buffer.
/// Used for commit records, checkpoint records and header slots (never on the per-key read path).
struct ByteWriter {
    private(set) var bytes: [UInt8]

    init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    var count: Int { bytes.count }

    mutating func removeAll(keepingCapacity: Bool = true) { bytes.removeAll(keepingCapacity: keepingCapacity) }

    mutating func u8(_ value: UInt8) { bytes.append(value) }

    mutating func u16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func u32(_ value: UInt32) {
        for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(i)))) }
    }

    mutating func u64(_ value: UInt64) {
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    /// LEB128: 7 bits per byte, low groups first, high bit set on every byte but the last.
    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func append(_ raw: UnsafeRawBufferPointer) { bytes.append(contentsOf: raw) }
    mutating func append(_ raw: [UInt8]) { bytes.append(contentsOf: raw) }

    /// Overwrites 4 bytes at `offset` (for back-patched lengths and checksums).
    mutating func patchU32(_ value: UInt32, at offset: Int) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
    }
}
