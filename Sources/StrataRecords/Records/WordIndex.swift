import StrataStorage

/// The entries of a word index (``FullTextIndex``; FORMAT.md §12, "Word indexes"): one per word
/// and row, keyed by the folded word's UTF-8 bytes, a 0 byte and the row's primary key, holding
/// how many times the word occurs in each of the index's properties of the row (a u32 each, in
/// the index's order), so that a search of some of them is answered by the entries alone.
enum WordIndex {
    /// How often each folded word occurs in the value of each of `fields` in `row`: one
    /// dictionary per field, in order.
    static func terms(_ row: [StoredValue], fields: [Int], folding: WordFolding) -> [[String: Int]] {
        fields.map { field in
            var counts: [String: Int] = [:]
            if case .string(let text) = row[field] {
                WordTokenizer.forEachWord(text, folding: folding) { counts[$0, default: 0] += 1 }
            }
            return counts
        }
    }

    /// The entries of one row: for each word of any field, its count in each field (the
    /// value ``value(_:)`` encodes).
    static func entries(_ perField: [[String: Int]]) -> [String: [Int]] {
        var entries: [String: [Int]] = [:]
        for (position, counts) in perField.enumerated() {
            for (word, count) in counts {
                entries[word, default: [Int](repeating: 0, count: perField.count)][position] = count
            }
        }
        return entries
    }

    /// The entry key of `word` in the row with primary key `pk`.
    static func key(_ word: String, pk: UInt64) -> [UInt8] {
        var key = Array(word.utf8)
        key.append(0)
        key += KeyEncoding.primaryKey(pk)
        return key
    }

    /// The prefix of every entry of exactly `word`.
    static func wordPrefix(_ word: String) -> [UInt8] { Array(word.utf8) + [0] }

    /// An entry's value: the count in each field, 4 bytes big-endian each.
    static func value(_ counts: [Int]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4 * counts.count)
        for count in counts {
            let n = UInt32(clamping: count)
            out += [UInt8(n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8),
                    UInt8(truncatingIfNeeded: n)]
        }
        return out
    }

    /// The occurrences an entry counts in the fields `searched` marks (parallel to the index's
    /// properties); `corrupt` when the value is not 4 bytes per property or counts none at all.
    static func count(_ value: UnsafeRawBufferPointer, searched: [Bool], tree: String) throws -> Int {
        guard value.count == 4 * searched.count else {
            throw StrataError.corrupt("\(tree): a word entry holds \(value.count) bytes, not \(4 * searched.count)",
                                      offset: nil)
        }
        var total = 0, selected = 0
        for position in searched.indices {
            let base = 4 * position
            let n = Int(value[base]) << 24 | Int(value[base + 1]) << 16 | Int(value[base + 2]) << 8 | Int(value[base + 3])
            total += n
            if searched[position] { selected += n }
        }
        guard total > 0 else { throw StrataError.corrupt("\(tree): a word entry counts 0 occurrences", offset: nil) }
        return selected
    }

    /// The primary key of an entry (its last 8 bytes, after a 0 byte); `corrupt` otherwise.
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
