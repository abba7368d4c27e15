import StrataStorage

/// A word index's recent changes (FORMAT.md §12, "Recent changes"; decisions 96 and 98): a flush
/// writes the postings its transaction changed as one *batch* of a few entries, keyed after
/// every word (`FF`, the batch's id, the entry's first word), instead of merging each word's
/// changes into its blocks; the flush that would hold ``batchesBeforeMerge`` batches merges them
/// all, and its own changes, into the blocks and deletes them. A commit so costs a few puts
/// however many words it touched, and each word's blocks are rewritten once per merge, not per
/// commit; readers apply the batches over the blocks (a row's latest change wins), each batch
/// decoded once per store (``WordBatchCache``).
enum WordChanges {
    /// The first byte of every change entry's key: no word holds it (UTF-8 never does).
    static let marker: UInt8 = 0xFF
    /// The flush that would make an index hold this many batches merges them instead (so an
    /// index holds at most one fewer).
    static let batchesBeforeMerge = 8
    /// Changes a flush writes as a batch at most: a larger flush (a migration, a bulk load)
    /// merges into the blocks at once, where its cost per word is spread over many rows and a
    /// batch that size would slow every search until the next merge.
    static let largestBatch = 4_096
    /// Bytes an entry's value reaches before the next word starts another entry. An entry
    /// holds whole words, so one word with many changes makes a larger one (the tree keeps a
    /// large value out of line).
    static let entryTargetBytes = 640

    /// Flushes one transaction may write as batches: a batch's id is its transaction's ID times
    /// this plus the flush's number within the transaction (a flush past it merges instead).
    static let flushesPerTransaction: UInt64 = 1 << 16

    /// The id of the batch the `flush`th flush of transaction `transactionID` writes: ids
    /// ascend in the order batches are written and are never given twice in a store's life
    /// (a committed transaction's ID is never reused), so a decoded batch can be kept by its id
    /// (``WordBatchCache``). Nil when the id would not fit (the flush merges instead).
    static func batchID(transaction transactionID: UInt64, flush: Int) -> UInt64? {
        guard flush >= 0, UInt64(flush) < flushesPerTransaction,
              transactionID >= 1, transactionID < UInt64.max / flushesPerTransaction else { return nil }
        return transactionID * flushesPerTransaction + UInt64(flush)
    }

    /// The transaction that wrote batch `id`.
    static func transaction(ofBatch id: UInt64) -> UInt64 { id / flushesPerTransaction }

    /// The key prefix of batch `id`'s entries: `FF` and the id, big-endian.
    static func batchPrefix(_ id: UInt64) -> [UInt8] {
        var prefix: [UInt8] = [marker]
        prefix.reserveCapacity(9)
        for shift in stride(from: 56, through: 0, by: -8) { prefix.append(UInt8(truncatingIfNeeded: id >> UInt64(shift))) }
        return prefix
    }

    /// The bytes of a change entry's key before its first word.
    static let keyPrefixLength = 9

    /// The batch id of a change entry's key; nil for a block's key. `corrupt` for a key too
    /// short to hold an id and a word, or id 0.
    static func batch(of key: UnsafeRawBufferPointer, tree: String) throws -> UInt64? {
        guard key.first == marker else { return nil }
        guard key.count > keyPrefixLength else { throw corrupt(tree, "a change entry's key holds no batch and word") }
        var id: UInt64 = 0
        for i in 1..<keyPrefixLength { id = id << 8 | UInt64(key[i]) }
        guard id >= 1 else { throw corrupt(tree, "a change entry's batch is 0") }
        return id
    }

    /// The keys of every change entry `cursor`'s tree holds, in order (what a merge deletes).
    static func entryKeys(_ cursor: Cursor, tree: String) throws -> [[UInt8]] {
        var keys: [[UInt8]] = []
        var ok = try cursor.seek([marker])
        while ok, try batch(of: cursor.key, tree: tree) != nil {
            keys.append(cursor.copyKey())
            ok = try cursor.next()
        }
        return keys
    }

    /// The ids of the batches `cursor`'s tree holds, ascending (the order they apply in): one
    /// seek per batch, not a read of every entry.
    static func batchIDs(_ cursor: Cursor, tree: String) throws -> [UInt64] {
        var ids: [UInt64] = []
        var ok = try cursor.seek([marker])
        while ok, let id = try batch(of: cursor.key, tree: tree) {
            ids.append(id)
            guard id < UInt64.max else { break }
            ok = try cursor.seek(batchPrefix(id + 1))
        }
        return ids
    }

    static func corrupt(_ tree: String, _ what: String) -> StrataError {
        StrataError.corrupt("\(tree): \(what)", offset: nil)
    }

    /// One batch read back (or kept as its flush wrote it), in flat arrays: its words in order
    /// (their bytes, their changes' range), each change's row and where its counts start (-1:
    /// the row no longer holds the word). Searches find a term's words in it by binary search;
    /// merges read the words as a sorted stream; the store keeps it by id (``WordBatchCache``).
    struct Decoded: Sendable {
        var wordBytes: [UInt8] = []
        var words: [(bytes: Range<Int>, changes: Range<Int>)] = []
        var pks: [UInt64] = []
        var countsAt: [Int32] = []
        var counts: [UInt32] = []

        func word(_ i: Int) -> ArraySlice<UInt8> { wordBytes[words[i].bytes] }

        func changes(_ i: Int) -> Range<Int> { words[i].changes }

        /// Changes held: what a cache of decoded batches counts against its bound.
        var changeCount: Int { pks.count }

        /// Reads batch `id` alone from `cursor`'s tree.
        static func read(batch id: UInt64, _ cursor: Cursor, name: String, fieldCount: Int) throws -> Decoded {
            var decoded = Decoded()
            var ok = try cursor.seek(WordChanges.batchPrefix(id))
            while ok, try WordChanges.batch(of: cursor.key, tree: name) == id {
                try decoded.append(entry: cursor.value, name: name, fieldCount: fieldCount)
                ok = try cursor.next()
            }
            return decoded
        }

        /// Appends the words of one change entry's value.
        private mutating func append(entry: UnsafeRawBufferPointer, name: String, fieldCount: Int) throws {
            var reader = Reader(entry, fieldCount: fieldCount, tree: name)
            while let range = try reader.nextWord() {
                let start = wordBytes.count
                wordBytes.append(contentsOf: reader.word(range))
                let first = pks.count
                while true {
                    let at = counts.count
                    guard let holds = try reader.nextChange(into: &counts) else { break }
                    pks.append(reader.pk)
                    countsAt.append(holds ? Int32(truncatingIfNeeded: at) : -1)
                }
                words.append((start..<wordBytes.count, first..<pks.count))
            }
        }

        /// The words (indexes into `words`) that equal `word`, or begin with it when `prefix`:
        /// a range, since one batch's words ascend.
        func words(matching word: [UInt8], prefix: Bool) -> Range<Int> {
            // The first word not below `word`.
            var low = 0, high = words.count
            while low < high {
                let middle = (low + high) / 2
                if self.word(middle).lexicographicallyPrecedes(word) { low = middle + 1 } else { high = middle }
            }
            var end = low
            while end < words.count, prefix ? self.word(end).starts(with: word) : self.word(end).elementsEqual(word) {
                end += 1
                if !prefix { break }
            }
            return low..<end
        }

        /// Occurrences of change `c`'s word in the properties `searched` marks; -1 when its row
        /// no longer holds the word.
        func occurrences(_ c: Int, searched: [Bool]) -> Int {
            let at = Int(countsAt[c])
            guard at >= 0 else { return -1 }
            var n = 0
            for field in searched.indices where searched[field] && at + field < counts.count { n += Int(counts[at + field]) }
            return n
        }
    }

    /// The entries of batch `id` listing `batch` (words ascending, each word's rows ascending,
    /// counts for `fieldCount` properties): a word's changes are measured before they are
    /// written, so they go straight into the entry's value, with no buffer of their own.
    static func entries(of batch: Decoded, id: UInt64, fieldCount: Int) -> [(key: [UInt8], value: [UInt8])] {
        let prefix = batchPrefix(id)
        var entries: [(key: [UInt8], value: [UInt8])] = []
        var key: [UInt8] = []
        var value: [UInt8] = []
        value.reserveCapacity(entryTargetBytes + 64)
        for w in batch.words.indices {
            let bytes = batch.words[w].bytes, changes = batch.words[w].changes
            if value.count >= entryTargetBytes {
                entries.append((key, value))
                value = []
                value.reserveCapacity(entryTargetBytes + 64)
            }
            if value.isEmpty {
                key = prefix
                key.append(contentsOf: batch.wordBytes[bytes])
            }
            value.append(contentsOf: batch.wordBytes[bytes])
            value.append(0)
            var length = 0, previous: UInt64 = 0
            for c in changes {
                let pk = batch.pks[c]
                length += varintLength(c == changes.lowerBound ? pk : pk - previous) + 1
                previous = pk
                let at = Int(batch.countsAt[c])
                guard at >= 0 else { continue }
                for field in 0..<fieldCount { length += varintLength(UInt64(batch.counts[at + field])) }
            }
            RowCodec.appendVarint(&value, UInt64(changes.count))
            RowCodec.appendVarint(&value, UInt64(length))
            value.reserveCapacity(value.count + length)
            for c in changes {
                let pk = batch.pks[c]
                RowCodec.appendVarint(&value, c == changes.lowerBound ? pk : pk - previous)
                previous = pk
                let at = Int(batch.countsAt[c])
                guard at >= 0 else {
                    value.append(0)
                    continue
                }
                value.append(1)
                for field in 0..<fieldCount { RowCodec.appendVarint(&value, UInt64(batch.counts[at + field])) }
            }
        }
        if !value.isEmpty { entries.append((key, value)) }
        return entries
    }

    /// The bytes of `value` as an unsigned LEB128 varint.
    @inline(__always)
    static func varintLength(_ value: UInt64) -> Int {
        value < 0x80 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
    }

    /// Reads one entry: its words in order, each word's changes in order. Every malformed byte
    /// is a typed `corrupt` naming the tree.
    struct Reader {
        private let bytes: UnsafeRawBufferPointer
        let fieldCount: Int
        let tree: String
        private var position = 0
        /// Where the current word's changes end.
        private var wordEnd = 0
        /// The current word's changes not read yet.
        private var remaining = 0
        /// Whether a change of the current word was read (the first holds its row, not a difference).
        private var started = false
        private var previousWord: Range<Int>?
        /// The current change's row.
        private(set) var pk: UInt64 = 0

        init(_ bytes: UnsafeRawBufferPointer, fieldCount: Int, tree: String) {
            self.bytes = bytes
            self.fieldCount = fieldCount
            self.tree = tree
        }

        /// The bytes of a word ``nextWord()`` returned.
        func word(_ range: Range<Int>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[range]) }

        /// Moves to the next word (passing over the current one's changes not read) and returns
        /// its bytes' range; nil after the last.
        mutating func nextWord() throws -> Range<Int>? {
            position = max(position, wordEnd)
            guard position < bytes.count else {
                if previousWord == nil { throw corrupt(tree, "a change entry holds no word") }
                return nil
            }
            let start = position
            while position < bytes.count, bytes[position] != 0 { position += 1 }
            guard position < bytes.count, position > start else {
                throw corrupt(tree, "a change entry's word is empty or not ended by 00")
            }
            let word = start..<position
            position += 1
            if let previous = previousWord, !Self.ascending(self.word(previous), self.word(word)) {
                throw corrupt(tree, "a change entry's words are not in ascending order")
            }
            previousWord = word
            let count = try readVarint(bits: 32, end: bytes.count)
            let length = try readVarint(bits: 32, end: bytes.count)
            guard count >= 1 else { throw corrupt(tree, "a change entry's word has no change") }
            guard length <= UInt64(bytes.count - position) else { throw corrupt(tree, "a change entry is cut short") }
            remaining = Int(count)
            wordEnd = position + Int(length)
            started = false
            pk = 0
            return word
        }

        /// The current word's next change: true when row ``pk`` holds it (its counts appended
        /// to `counts`), false when it no longer does; nil after the word's last change.
        mutating func nextChange(into counts: inout [UInt32]) throws -> Bool? {
            guard remaining > 0 else {
                guard position == wordEnd else { throw corrupt(tree, "a change entry's word has bytes past its changes") }
                return nil
            }
            let delta = try readVarint(bits: 64, end: wordEnd)
            if started {
                guard delta >= 1 else { throw corrupt(tree, "a change repeats the row before it") }
                guard pk <= UInt64.max - delta else { throw corrupt(tree, "a change's row is past 2⁶⁴") }
                pk += delta
            } else {
                pk = delta
                started = true
            }
            remaining -= 1
            guard position < wordEnd else { throw corrupt(tree, "a change is cut short") }
            let tag = bytes[position]
            position += 1
            switch tag {
            case 0:
                return false
            case 1:
                var total: UInt64 = 0
                for _ in 0..<fieldCount {
                    let n = try readVarint(bits: 32, end: wordEnd)
                    total += n
                    counts.append(UInt32(n))
                }
                guard total > 0 else { throw corrupt(tree, "a change counts 0 occurrences") }
                return true
            default:
                throw corrupt(tree, "a change's tag is \(tag) (0 or 1 expected)")
            }
        }

        /// Whether `a` sorts strictly before `b`, byte by byte.
        static func ascending(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
            let shared = min(a.count, b.count)
            var i = 0
            while i < shared {
                if a[i] != b[i] { return a[i] < b[i] }
                i += 1
            }
            return a.count < b.count
        }

        /// An unsigned LEB128 varint of at most `bits` bits (32 or 64) ending before `end`.
        @inline(__always)
        private mutating func readVarint(bits: Int, end: Int) throws -> UInt64 {
            // One byte: nearly every count, length and key difference.
            if position < end, bytes[position] < 0x80 {
                position += 1
                return UInt64(bytes[position - 1])
            }
            var value: UInt64 = 0, shift = 0
            while true {
                guard position < end else { throw corrupt(tree, "a change entry is cut short") }
                let byte = bytes[position]
                position += 1
                let part = UInt64(byte & 0x7F)
                guard shift < bits, shift == 0 || part >> (64 - shift) == 0 else {
                    throw corrupt(tree, "a change entry's varint is longer than \(bits) bits")
                }
                value |= part << shift
                shift += 7
                if byte < 0x80 { break }
            }
            guard bits == 64 || value <= UInt64(UInt32.max) else {
                throw corrupt(tree, "a change entry's number is past 2³²")
            }
            return value
        }
    }
}
