extension ReferenceFormat {
    /// Builds a record field by field (little-endian integers, LEB128 varints, raw bytes). It
    /// writes whatever it is given: a forgery needs fields no writer would write.
    package struct ByteWriter {
        /// What has been written so far.
        package private(set) var bytes: [UInt8] = []

        /// An empty writer.
        package init() {}

        package mutating func u8(_ value: UInt8) { bytes.append(value) }
        package mutating func u16(_ value: UInt16) { append(littleEndianBytes(UInt64(value), width: 2)) }
        package mutating func u32(_ value: UInt32) { append(littleEndianBytes(UInt64(value), width: 4)) }
        package mutating func u64(_ value: UInt64) { append(littleEndianBytes(value, width: 8)) }
        package mutating func append(_ raw: [UInt8]) { bytes += raw }
        package mutating func varint(_ value: UInt64) { append(ByteWriter.varint(value)) }

        /// The LEB128 encoding of `value` (§5): 1 to 10 bytes, low group first. Rows use the
        /// same varints (§12).
        package static func varint(_ value: UInt64) -> [UInt8] {
            var encoded: [UInt8] = []
            var rest = value
            repeat {
                let group = UInt8(rest & 0x7F)
                rest >>= 7
                encoded.append(rest == 0 ? group : group | 0x80)
            } while rest != 0
            return encoded
        }
    }
}
