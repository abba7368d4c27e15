import StrataStorage

/// The entries of a word index (``FullTextIndex``; FORMAT.md §12, "Word indexes"): one per word
/// and row, keyed by the folded word's UTF-8 bytes, a 0 byte and the row's primary key, holding
/// how many times the word occurs in the row's indexed values.
enum WordIndex {
    /// How often each folded word occurs in the indexed fields of `row`.
    static func terms(_ row: [StoredValue], fields: [Int], folding: WordFolding) -> [String: Int] {
        var counts: [String: Int] = [:]
        for field in fields {
            guard case .string(let text) = row[field] else { continue }
            WordTokenizer.forEachWord(text, folding: folding) { counts[$0, default: 0] += 1 }
        }
        return counts
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

    /// An entry's value: the count, 4 bytes big-endian.
    static func value(_ count: Int) -> [UInt8] {
        let n = UInt32(clamping: count)
        return [UInt8(n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8),
                UInt8(truncatingIfNeeded: n)]
    }

    /// The count an entry holds; `corrupt` when it is not 4 bytes or is 0.
    static func count(_ value: UnsafeRawBufferPointer, tree: String) throws -> Int {
        guard value.count == 4 else {
            throw StrataError.corrupt("\(tree): a word entry holds \(value.count) bytes, not 4", offset: nil)
        }
        let n = value.reduce(0) { $0 << 8 | Int($1) }
        guard n > 0 else { throw StrataError.corrupt("\(tree): a word entry counts 0 occurrences", offset: nil) }
        return n
    }

    /// The primary key of an entry (its last 8 bytes, after a 0 byte); `corrupt` otherwise.
    static func primaryKey(_ key: UnsafeRawBufferPointer, tree: String) throws -> UInt64 {
        guard key.count >= 10, key[key.count - 9] == 0 else {
            throw StrataError.corrupt("\(tree): a word entry's key does not end in 0 and a primary key", offset: nil)
        }
        return try RecordTrees.primaryKey(key, at: key.count - 8, exactLength: key.count, tree: tree)
    }
}
