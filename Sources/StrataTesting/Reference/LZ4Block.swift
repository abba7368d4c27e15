extension ReferenceFormat {
    /// Decoding one LZ4 *block* (FORMAT.md §3 "Compression"; not the LZ4 frame format), written
    /// from the block format's definition rather than linked from liblz4, which the engine uses.
    ///
    /// A block is a run of sequences: a token (high nibble: literal count, low nibble: match
    /// length − 4; 15 in either means extension bytes follow, each added, until one below 255),
    /// the literals, a 2-byte little-endian match offset back into the output, the match length's
    /// extension. The last sequence is literals only: the block ends right after them.
    package enum LZ4Block {
        /// The `rawLength` bytes `block` decodes to; throws when the block is malformed or does
        /// not decode to exactly `rawLength` bytes (§3: such a frame is not valid).
        package static func decode(_ block: [UInt8], rawLength: Int) throws -> [UInt8] {
            var output: [UInt8] = []
            output.reserveCapacity(rawLength)
            var position = 0
            /// A 15 in the token's nibble, extended by the bytes that follow.
            func extendedLength() throws -> Int {
                var length = 15
                while true {
                    guard position < block.count else {
                        throw FormatViolation("LZ4: a length extension runs past the block")
                    }
                    let byte = block[position]
                    position += 1
                    length += Int(byte)
                    // No length beyond the output is legal, and checking here keeps the sum finite.
                    guard length <= rawLength + 15 else {
                        throw FormatViolation("LZ4: a length exceeds the raw length")
                    }
                    if byte != 255 { return length }
                }
            }
            while true {
                guard position < block.count else { throw FormatViolation("LZ4: the block ends before a token") }
                let token = block[position]
                position += 1
                var literalCount = Int(token >> 4)
                if literalCount == 15 { literalCount = try extendedLength() }
                guard literalCount <= block.count - position else {
                    throw FormatViolation("LZ4: literals run past the block")
                }
                guard literalCount <= rawLength - output.count else {
                    throw FormatViolation("LZ4: literals overflow the raw length")
                }
                output += block[position..<(position + literalCount)]
                position += literalCount
                if position == block.count { break }
                guard block.count - position >= 2 else { throw FormatViolation("LZ4: a match offset is cut short") }
                let matchOffset = Int(block[position]) | Int(block[position + 1]) << 8
                position += 2
                guard matchOffset > 0, matchOffset <= output.count else {
                    throw FormatViolation("LZ4: match offset \(matchOffset) with \(output.count) bytes decoded")
                }
                var matchLength = Int(token & 0x0F)
                if matchLength == 15 { matchLength = try extendedLength() }
                matchLength += 4
                guard matchLength <= rawLength - output.count else {
                    throw FormatViolation("LZ4: a match overflows the raw length")
                }
                // Byte by byte: a match may overlap the bytes it is producing (a repeated run).
                let matchStart = output.count - matchOffset
                for index in 0..<matchLength { output.append(output[matchStart + index]) }
            }
            guard output.count == rawLength else {
                throw FormatViolation("LZ4: the block decodes to \(output.count) bytes, the raw length is \(rawLength)")
            }
            return output
        }
    }
}
