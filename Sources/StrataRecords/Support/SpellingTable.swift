/// Slots of a vocabulary's words by their raw UTF-8 spelling (``WordVocabulary``): an
/// open-addressing hash table whose keys are byte strings kept one after another in one array,
/// hashed by FNV-1a. A word of Latin text is looked up by the bytes the tokenizer found
/// (``WordTokenizer/forEachLatinWord(_:_:)``), before any folding or `String`: spellings repeat
/// (text repeats its words), so most words cost a hash and a comparison of a few bytes.
///
/// Spellings are distinct keys even where they fold alike (`Café`, `cafe`): each is remembered
/// with the slot of its folded form. A spelling longer than ``longestKept`` bytes is not
/// remembered (the caller folds it each time), so the table's bytes stay bounded by its count.
/// ``WordVocabularyPool`` drops a vocabulary whose spellings passed four times its words' capacity.
///
/// Invariants: `entries.count` is 0 (nothing allocated yet) or a power of two at least twice
/// `count` (a probe always ends at an empty entry); an entry is empty (`slot < 0`) or holds a
/// key's `offset` and `length` in `bytes`, its hash's low 32 bits and its slot.
struct SpellingTable {
    /// The longest spelling remembered, in bytes (the longest folded word is 200).
    static let longestKept = 255

    private struct Entry {
        var offset: Int32 = 0
        var length: Int32 = 0
        var hash: UInt32 = 0
        var slot: Int32 = -1
    }

    private var bytes: [UInt8] = []
    private var entries: [Entry] = []
    /// Spellings remembered.
    private(set) var count = 0

    /// FNV-1a of `word`'s bytes, its high bits folded into the low ones that index the table.
    static func hash(_ word: UnsafeBufferPointer<UInt8>) -> Int {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in word {
            h = (h ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return Int(truncatingIfNeeded: h ^ (h >> 29))
    }

    /// The slot remembered for `word` (whose ``hash(_:)`` is `hash`), or nil.
    func find(_ word: UnsafeBufferPointer<UInt8>, hash: Int) -> Int? {
        if entries.isEmpty { return nil }
        let mask = entries.count - 1
        let check = UInt32(truncatingIfNeeded: hash)
        var i = hash & mask
        while true {
            let entry = entries[i]
            if entry.slot < 0 { return nil }
            if entry.hash == check, Int(entry.length) == word.count, matches(word, at: Int(entry.offset)) {
                return Int(entry.slot)
            }
            i = (i + 1) & mask
        }
    }

    private func matches(_ word: UnsafeBufferPointer<UInt8>, at offset: Int) -> Bool {
        var j = offset
        for byte in word {
            if bytes[j] != byte { return false }
            j += 1
        }
        return true
    }

    /// Remembers `slot` for `word`, which must not be remembered yet, unless `word` is longer
    /// than ``longestKept`` or the table's bytes would pass what an `Int32` offset reaches
    /// (then the caller keeps folding it: slower, never wrong).
    mutating func remember(_ word: UnsafeBufferPointer<UInt8>, hash: Int, slot: Int) {
        guard word.count <= Self.longestKept, bytes.count + word.count <= Int(Int32.max),
              slot >= 0, slot <= Int(Int32.max) else { return }
        let offset = Int32(truncatingIfNeeded: bytes.count)
        bytes.append(contentsOf: word)
        place(Entry(offset: offset, length: Int32(truncatingIfNeeded: word.count),
                    hash: UInt32(truncatingIfNeeded: hash), slot: Int32(truncatingIfNeeded: slot)))
    }

    private mutating func place(_ entry: Entry) {
        if 2 * (count + 1) > entries.count { grow() }
        let mask = entries.count - 1
        var i = Int(entry.hash) & mask
        while entries[i].slot >= 0 { i = (i + 1) & mask }
        entries[i] = entry
        count += 1
    }

    /// Doubles the entries; each keeps its hash, so no key is hashed again. Only the low 32 bits
    /// of a hash are kept, which is all a table of fewer than 2³¹ entries indexes by.
    private mutating func grow() {
        let old = entries
        entries = Array(repeating: Entry(), count: max(64, 2 * old.count))
        count = 0
        for entry in old where entry.slot >= 0 { place(entry) }
    }
}
