// Fixed-width fields (FORMAT.md: "all integers are little-endian and unsigned unless stated").
//
// These trap on a position outside the bytes: they are for positions the caller computed from
// a structure it already decoded (forging a field, re-sealing a checksum). Bytes read from a
// file whose length is not yet known go through ``ReferenceFormat/ByteReader``, which throws.

extension Array where Element == UInt8 {
    /// The unsigned little-endian integer of `width` bytes (1...8) at `offset`.
    package func littleEndian(at offset: Int, width: Int) -> UInt64 {
        precondition(width >= 1 && width <= 8, "a field is 1 to 8 bytes wide, not \(width)")
        precondition(offset >= 0 && offset <= count - width, "\(width) bytes at \(offset) lie outside \(count) bytes")
        var value: UInt64 = 0
        for index in (0..<width).reversed() { value = value << 8 | UInt64(self[offset + index]) }
        return value
    }

    /// Writes the low `width` bytes (1...8) of `value`, little-endian, at `offset`; the bytes
    /// must already be there (a field is overwritten, never appended).
    package mutating func setLittleEndian(_ value: UInt64, at offset: Int, width: Int) {
        precondition(width >= 1 && width <= 8, "a field is 1 to 8 bytes wide, not \(width)")
        precondition(offset >= 0 && offset <= count - width, "\(width) bytes at \(offset) lie outside \(count) bytes")
        for index in 0..<width { self[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
    }
}

extension ReferenceFormat {
    /// The `width` (1...8) little-endian bytes of `value`, alone.
    package static func littleEndianBytes(_ value: UInt64, width: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: width)
        bytes.setLittleEndian(value, at: 0, width: width)
        return bytes
    }
}
