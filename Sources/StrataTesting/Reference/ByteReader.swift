extension ReferenceFormat {
    /// Reads a record field by field from bytes that came from a file: every read is checked
    /// against the end, and one that would run past it throws instead of trapping.
    ///
    /// Invariant: `start <= position <= end <= bytes.count`.
    package struct ByteReader {
        /// The bytes read from; fields are taken from `position` up to `end`.
        package let bytes: [UInt8]
        /// Where the next field begins.
        package private(set) var position: Int
        /// Where the readable bytes end (a record inside a larger buffer ends before it does).
        package let end: Int

        /// A reader of `bytes[start..<end]` (`end` defaults to the end of `bytes`).
        package init(_ bytes: [UInt8], from start: Int = 0, to end: Int? = nil) {
            let end = end ?? bytes.count
            precondition(start >= 0 && start <= end && end <= bytes.count,
                         "range \(start)..<\(end) of \(bytes.count) bytes")
            self.bytes = bytes
            position = start
            self.end = end
        }

        /// Whether every byte has been read.
        package var isAtEnd: Bool { position == end }
        /// Bytes not read yet.
        package var remaining: Int { end - position }

        /// Moves past `length` bytes and returns where they begin.
        private mutating func advance(_ length: Int) throws -> Int {
            guard length >= 0, length <= end - position else {
                throw FormatViolation("a read of \(length) bytes at \(position) runs past \(end)")
            }
            defer { position += length }
            return position
        }

        package mutating func u8() throws -> UInt8 { bytes[try advance(1)] }
        package mutating func u16() throws -> UInt16 { UInt16(bytes.littleEndian(at: try advance(2), width: 2)) }
        package mutating func u32() throws -> UInt32 { UInt32(bytes.littleEndian(at: try advance(4), width: 4)) }
        package mutating func u64() throws -> UInt64 { bytes.littleEndian(at: try advance(8), width: 8) }

        /// The next `length` bytes.
        package mutating func bytes(_ length: Int) throws -> [UInt8] {
            let start = try advance(length)
            return Array(bytes[start..<(start + length)])
        }

        /// A LEB128 varint (§5): 7 bits per byte, low group first, the high bit says more
        /// follow, at most 10 bytes, and no bits above the 64th.
        package mutating func varint() throws -> UInt64 {
            var value: UInt64 = 0
            for group in 0..<10 {
                let byte = try u8()
                if group == 9 && byte > 1 { throw FormatViolation("a varint overflows 64 bits at \(position - 1)") }
                value |= UInt64(byte & 0x7F) << (7 * UInt64(group))
                if byte & 0x80 == 0 { return value }
            }
            throw FormatViolation("a varint longer than 10 bytes ends at \(position)")
        }

        /// A varint that must not exceed `maximum` (a length or an id), as an `Int`.
        package mutating func varint(atMost maximum: Int) throws -> Int {
            let value = try varint()
            guard value <= UInt64(maximum) else { throw FormatViolation("varint \(value) exceeds \(maximum)") }
            return Int(value)
        }
    }
}
