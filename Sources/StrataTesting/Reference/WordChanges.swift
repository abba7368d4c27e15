extension ReferenceFormat {
    /// A word index's change entries (FORMAT.md §12, "Recent changes"), written from the document
    /// alone: the key is `FF`, a batch id (u64 big-endian, ≥ 1) and the first word's bytes;
    /// the value lists words in ascending byte order, each its bytes (at least one), `00`, a varint
    /// count of changes (≥ 1), a varint length of the changes in bytes, then the changes: a
    /// varint row key (the first) or difference (≥ 1), then `00` (removed) or `01` and a varint
    /// count per property (each ≤ 32 bits, at least one not 0); nothing after the last word.
    package enum WordChanges {
        /// One row's change to a word: its counts, or nil when it no longer holds the word.
        package struct Change: Equatable, Sendable {
            package var key: UInt64
            package var counts: [UInt32]?

            /// Row `key` holds the word `counts` times per property (nil: no longer holds it).
            package init(key: UInt64, counts: [UInt32]?) {
                self.key = key
                self.counts = counts
            }
        }

        /// A word and its changes, rows ascending.
        package struct Word: Equatable, Sendable {
            package var word: [UInt8]
            package var changes: [Change]

            /// `word`'s bytes and its `changes`.
            package init(word: [UInt8], changes: [Change]) {
                self.word = word
                self.changes = changes
            }
        }

        /// The key of batch `batch`'s entry whose first word is `firstWord`.
        package static func key(batch: UInt64, firstWord: [UInt8]) -> [UInt8] {
            [0xFF] + (0..<8).map { UInt8((batch >> (56 - 8 * UInt64($0))) & 0xFF) } + firstWord
        }

        /// The batch and first word of a change entry's key; nil for any other key.
        package static func parseKey(_ key: [UInt8]) -> (batch: UInt64, firstWord: [UInt8])? {
            guard key.count >= 6, key[0] == 0xFF else { return nil }
            guard key.count >= 10 else { return nil }
            let batch = key[1..<9].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard batch >= 1 else { return nil }
            return (batch, Array(key[9...]))
        }

        /// The value listing `words` (ascending, each with changes, rows ascending).
        package static func encode(_ words: [Word]) -> [UInt8] {
            var out: [UInt8] = []
            for word in words {
                var changes: [UInt8] = []
                for (i, change) in word.changes.enumerated() {
                    changes += ByteWriter.varint(i == 0 ? change.key : change.key - word.changes[i - 1].key)
                    if let counts = change.counts {
                        changes.append(1)
                        for count in counts { changes += ByteWriter.varint(UInt64(count)) }
                    } else {
                        changes.append(0)
                    }
                }
                out += word.word + [0] + ByteWriter.varint(UInt64(word.changes.count))
                    + ByteWriter.varint(UInt64(changes.count)) + changes
            }
            return out
        }

        /// The words of `value` in an index of `fieldCount` properties; nil for a value the
        /// document does not allow.
        package static func decode(_ value: [UInt8], fieldCount: Int) -> [Word]? {
            var words: [Word] = []
            var at = 0
            while words.isEmpty || at < value.count {
                guard let end = value[at...].firstIndex(of: 0), end > at else { return nil }
                let word = Array(value[at..<end])
                if let last = words.last, !last.word.lexicographicallyPrecedes(word) { return nil }
                at = end + 1
                guard let count = PostingBlock.read(value, &at, bits: 32), count >= 1,
                      let length = PostingBlock.read(value, &at, bits: 32), Int(length) <= value.count - at else { return nil }
                let stop = at + Int(length)
                let bytes = Array(value[at..<stop])
                var inner = 0
                var changes: [Change] = []
                for i in 0..<Int(count) {
                    guard let number = PostingBlock.read(bytes, &inner, bits: 64) else { return nil }
                    var key = number
                    if i > 0 {
                        guard number >= 1 else { return nil }
                        let (sum, overflow) = changes[i - 1].key.addingReportingOverflow(number)
                        guard !overflow else { return nil }
                        key = sum
                    }
                    guard inner < bytes.count else { return nil }
                    let tag = bytes[inner]
                    inner += 1
                    switch tag {
                    case 0:
                        changes.append(Change(key: key, counts: nil))
                    case 1:
                        var counts: [UInt32] = []
                        for _ in 0..<fieldCount {
                            guard let n = PostingBlock.read(bytes, &inner, bits: 32) else { return nil }
                            counts.append(UInt32(n))
                        }
                        guard counts.contains(where: { $0 > 0 }) else { return nil }
                        changes.append(Change(key: key, counts: counts))
                    default:
                        return nil
                    }
                }
                guard inner == bytes.count else { return nil }
                at = stop
                words.append(Word(word: word, changes: changes))
            }
            return words
        }
    }
}
