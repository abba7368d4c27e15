extension ReferenceFormat {
    /// A word index entry's value (FORMAT.md §12, "Word indexes"), written from the document
    /// alone: postings in ascending key order; each but the first starts with its key's
    /// difference from the key before it (an unsigned LEB128 varint ≥ 1, the first posting's key
    /// being the entry key's), then one varint count per property of the index (at most 32 bits
    /// each, their sum ≥ 1); at least one posting, nothing after the last.
    package enum PostingBlock {
        /// One row holding the word: its key and its count in each property.
        package struct Posting: Equatable, Sendable {
            package var key: UInt64
            package var counts: [UInt32]

            /// A posting of `counts` for the row keyed `key`.
            package init(key: UInt64, counts: [UInt32]) {
                self.key = key
                self.counts = counts
            }
        }

        /// The value holding `postings` (keys ascending; the first is the entry key's).
        package static func encode(_ postings: [Posting]) -> [UInt8] {
            var out: [UInt8] = []
            for (i, posting) in postings.enumerated() {
                if i > 0 { out += ByteWriter.varint(posting.key - postings[i - 1].key) }
                for count in posting.counts { out += ByteWriter.varint(UInt64(count)) }
            }
            return out
        }

        /// The postings of `value` in an entry whose key ends in `firstKey`, in an index of
        /// `fieldCount` properties; nil for a value the document does not allow.
        package static func decode(_ value: [UInt8], firstKey: UInt64, fieldCount: Int) -> [Posting]? {
            var postings: [Posting] = []
            var at = 0
            var key = firstKey
            while postings.isEmpty || at < value.count {
                if !postings.isEmpty {
                    guard let delta = read(value, &at, bits: 64), delta >= 1 else { return nil }
                    let (sum, overflow) = key.addingReportingOverflow(delta)
                    guard !overflow else { return nil }
                    key = sum
                }
                var counts: [UInt32] = []
                for _ in 0..<fieldCount {
                    guard let count = read(value, &at, bits: 32) else { return nil }
                    counts.append(UInt32(count))
                }
                guard counts.contains(where: { $0 > 0 }) else { return nil }
                postings.append(Posting(key: key, counts: counts))
            }
            return postings
        }

        /// A varint of at most `bits` bits (32: at most 5 bytes; 64: at most 10): each byte's low
        /// seven bits, least significant first, until a byte below 0x80. (Change entries use the
        /// same varints.)
        static func read(_ bytes: [UInt8], _ at: inout Int, bits: Int) -> UInt64? {
            var digits: [UInt64] = []
            while true {
                guard at < bytes.count else { return nil }
                let byte = bytes[at]
                at += 1
                digits.append(UInt64(byte & 0x7F))
                if byte < 0x80 { break }
            }
            guard digits.count <= (bits == 32 ? 5 : 10) else { return nil }
            var value: UInt64 = 0
            for (i, digit) in digits.enumerated() {
                // The tenth byte of a 64-bit varint holds bit 63 alone.
                if i == 9 && digit > 1 { return nil }
                value |= digit << UInt64(7 * i)
            }
            guard bits == 64 || value <= UInt64(UInt32.max) else { return nil }
            return value
        }
    }
}
