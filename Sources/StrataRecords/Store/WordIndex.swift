import StrataStorage

/// The entries of a word index (``FullTextIndex``; FORMAT.md §12, "Word indexes"): blocks of
/// postings (``PostingBlock``), keyed by the folded word's UTF-8 bytes, a 0 byte and the first
/// primary key of the block; a posting holds how many times the word occurs in each of the
/// index's properties of its row, so that a search of some of them is answered by the entries
/// alone.
enum WordIndex {
    /// The words of one row's indexed values: each word once, with its count in each field,
    /// kept flat (a word's slot indexes `fieldCount` counts) so that a row costs one
    /// dictionary and one array, not an array per word.
    struct RowWords: Equatable {
        let fieldCount: Int
        /// Each word's slot.
        private(set) var slots: [String: Int] = [:]
        /// `fieldCount` counts per slot.
        private(set) var counts: [Int] = []

        init(fieldCount: Int) { self.fieldCount = fieldCount }

        /// Room for `words` distinct words, so a row's table is made once, not grown (and
        /// every word hashed again) at each doubling.
        init(fieldCount: Int, reservingWords words: Int) {
            self.fieldCount = fieldCount
            slots.reserveCapacity(words)
            counts.reserveCapacity(words * fieldCount)
        }

        mutating func add(_ word: String, field: Int) {
            // One lookup: the slot a new word would take is inserted by the access itself.
            let next = counts.count / fieldCount
            let slot = Self.value(&slots[word, default: next])
            if slot == next { counts.append(contentsOf: repeatElement(0, count: fieldCount)) }
            counts[slot * fieldCount + field] += 1
        }

        /// Reads a value through a mutating access (which inserts a dictionary's default).
        private static func value(_ slot: inout Int) -> Int { slot }

        /// The counts of the word in `slot`, one per field.
        func counts(ofSlot slot: Int) -> ArraySlice<Int> {
            counts[(slot * fieldCount)..<((slot + 1) * fieldCount)]
        }
    }

    /// The words of `row`'s values of `fields` and how often each occurs in each field.
    static func terms(_ row: [StoredValue], fields: [Int], folding: WordFolding) -> RowWords {
        // A word takes at least two bytes with its separator: an upper bound, for most text
        // about twice the words there are.
        var bytes = 0
        for field in fields { if case .string(let text) = row[field] { bytes += text.utf8.count } }
        var words = RowWords(fieldCount: fields.count, reservingWords: bytes / 4 + 1)
        for (position, field) in fields.enumerated() {
            guard case .string(let text) = row[field] else { continue }
            WordTokenizer.forEachWord(text, folding: folding) { words.add($0, field: position) }
        }
        return words
    }

    /// The key of `word`'s block that starts at primary key `pk`.
    static func key(_ word: String, pk: UInt64) -> [UInt8] {
        var key: [UInt8] = []
        appendKey(word, pk: pk, to: &key)
        return key
    }

    /// Appends the key of `word`'s block starting at `pk` to `out`.
    static func appendKey(_ word: String, pk: UInt64, to out: inout [UInt8]) {
        out.append(contentsOf: word.utf8)
        out.append(0)
        KeyEncoding.appendPrimaryKey(pk, to: &out)
    }

    /// The first primary key of an entry's block (its key's last 8 bytes, after a 0 byte);
    /// `corrupt` otherwise.
    @inline(__always)
    static func primaryKey(_ key: UnsafeRawBufferPointer, tree: String) throws -> UInt64 {
        guard key.count >= 10, key[key.count - 9] == 0 else {
            throw StrataError.corrupt("\(tree): a word entry's key does not end in 0 and a primary key", offset: nil)
        }
        return try RecordTrees.primaryKey(key, at: key.count - 8, exactLength: key.count, tree: tree)
    }
}

extension EntityDescription {
    /// The word index that answers a search of `properties` (in any order, each once): the one
    /// over exactly them, else the smallest over them and more; with which of its properties
    /// the search reads (its entries count each property apart). Nil when no index covers them.
    func wordIndex(covering properties: [String]) -> (position: Int, searched: [Bool])? {
        let wanted = Set(properties)
        guard wanted.count == properties.count else { return nil }
        var chosen: Int?
        for (i, indexed) in fullTextIndexes.enumerated() where wanted.isSubset(of: indexed) {
            if chosen == nil || indexed.count < fullTextIndexes[chosen!].count { chosen = i }
        }
        guard let chosen else { return nil }
        return (chosen, fullTextIndexes[chosen].map { wanted.contains($0) })
    }
}

extension WordQuery.Term {
    /// The prefix of the entries this term matches: the word and its `00` (exactly the word),
    /// or the word alone (every word it begins).
    var entryPrefix: [UInt8] { isPrefix ? Array(word.utf8) : Array(word.utf8) + [0] }
}
