extension ReferenceFormat {
    /// `crc32c` as FORMAT.md defines it: CRC-32C (Castagnoli), reflected polynomial
    /// `0x82F63B78`, initial value and final XOR `0xFFFFFFFF`; `crc32c("123456789") =
    /// 0xE3069283`. A byte-at-a-time table: the tools checksum kilobytes, not gigabytes, and
    /// the engine's hardware-assisted version is exactly what this one must not borrow.
    package enum CRC32C {
        /// The remainder of each byte value, one bit at a time.
        private static let table: [UInt32] = (0..<256).map { byte in
            var remainder = UInt32(byte)
            for _ in 0..<8 { remainder = remainder & 1 != 0 ? (remainder >> 1) ^ 0x82F6_3B78 : remainder >> 1 }
            return remainder
        }

        /// The checksum of `bytes`; with `previous`, of the bytes it covered followed by these
        /// (so a checksum can run over two pieces without joining them).
        package static func checksum<Bytes: Sequence<UInt8>>(_ bytes: Bytes, extending previous: UInt32 = 0) -> UInt32 {
            table.withUnsafeBufferPointer { table in
                var register = ~previous
                for byte in bytes { register = table[Int((register ^ UInt32(byte)) & 0xFF)] ^ (register >> 8) }
                return ~register
            }
        }
    }
}
