import Synchronization

/// The words a store's write transactions indexed, each with a slot: a row's words are found
/// here as they are split, without folding them again or building a `String` (a word of Latin
/// text by its UTF-8 spelling, decision 95; a word of other text that is not ASCII by its raw
/// scalars), and the pending postings (``PendingWords``) work on slots.
///
/// A vocabulary outlives its transaction (decision 87): relearning a store's words in every
/// transaction — folding each again, growing tables from empty — cost more than the words'
/// lookups. One transaction uses it at a time: it is taken from the store's
/// ``WordVocabularyPool`` when a transaction first changes a word index and given back when the
/// transaction ends (that hand-over, under the pool's lock, is why it may be `Sendable`).
final class WordVocabulary: @unchecked Sendable {
    /// Words at most before a vocabulary is dropped for a new one (memory stays bounded).
    static let capacity = 100_000

    private var slots: [String: Int] = [:]
    /// Each slot's word.
    private(set) var words: [String] = []
    /// Each raw spelling of a word in Latin text, by its UTF-8 bytes, with its slot (a folded
    /// word may have several spellings).
    private var spellings = SpellingTable()
    /// Each raw spelling of a word that is not ASCII in other text, by its scalars, with its slot.
    private var raw = ScalarTable<Int>()

    /// Spellings remembered, of both kinds (``WordVocabularyPool`` bounds them).
    var spellingCount: Int { spellings.count + raw.count }
    /// The words of the row being changed, before and after: reused by every row.
    private(set) var before = RowTally(), after = RowTally()

    /// Each slot's place in key order (the words' UTF-8 bytes), for the slots ranked so far.
    private(set) var ranks: [Int32] = []

    /// `slots` in key order of their words (their UTF-8 bytes): a commit writes its words'
    /// blocks in the order they lie in the tree, so consecutive writes share pages, and a batch
    /// of recent changes lists its words in that order (FORMAT.md §12). The slots ranked so far
    /// sort by rank, packed with the slot in one integer (no closure per comparison); words too
    /// new to be ranked sort by their bytes and are merged in. The ranks are made again when
    /// the vocabulary has grown by an eighth since.
    func inKeyOrder(_ slots: [Int32]) -> [Int32] {
        if words.count - ranks.count > ranks.count / 8 {
            let order = words.indices.sorted { words[$0].utf8.lexicographicallyPrecedes(words[$1].utf8) }
            ranks = [Int32](repeating: 0, count: words.count)
            for (rank, slot) in order.enumerated() { ranks[slot] = Int32(rank) }
        }
        var ranked: [UInt64] = []
        ranked.reserveCapacity(slots.count)
        var unranked: [Int32] = []
        for slot in slots {
            if Int(slot) < ranks.count {
                ranked.append(UInt64(ranks[Int(slot)]) << 32 | UInt64(UInt32(truncatingIfNeeded: slot)))
            } else {
                unranked.append(slot)
            }
        }
        ranked.sort()
        let inOrder = ranked.map { Int32(truncatingIfNeeded: $0 & 0xFFFF_FFFF) }
        guard !unranked.isEmpty else { return inOrder }
        unranked.sort { words[Int($0)].utf8.lexicographicallyPrecedes(words[Int($1)].utf8) }
        var out: [Int32] = []
        out.reserveCapacity(slots.count)
        var i = 0, j = 0
        while i < inOrder.count || j < unranked.count {
            if j == unranked.count
                || (i < inOrder.count
                    && words[Int(inOrder[i])].utf8.lexicographicallyPrecedes(words[Int(unranked[j])].utf8)) {
                out.append(inOrder[i])
                i += 1
            } else {
                out.append(unranked[j])
                j += 1
            }
        }
        return out
    }

    /// The slot of `word` (folded), made if new.
    func slot(of word: String) -> Int {
        let next = words.count
        let slot = Self.value(&slots[word, default: next])
        if slot == next { words.append(word) }
        return slot
    }

    /// Reads a value through a mutating access (which inserts a dictionary's default).
    private static func value(_ slot: inout Int) -> Int { slot }

    /// Tallies the words of `old` and `new` (nil: no row) in the properties `fields` into
    /// ``before`` and ``after``.
    func tally(old: [StoredValue]?, new: [StoredValue]?, fields: [Int]) {
        tally(old, fields: fields, into: &before)
        tally(new, fields: fields, into: &after)
    }

    private func tally(_ row: [StoredValue]?, fields: [Int], into tally: inout RowTally) {
        tally.begin()
        guard let row else { return }
        for (position, field) in fields.enumerated() {
            guard case .string(let text) = row[field] else { continue }
            // Latin text (most text, and all ASCII) by its bytes: a spelling met before costs a
            // hash and a comparison, no folding and no `String` (decision 95).
            let latin = WordTokenizer.forEachLatinWord(text) { spelling in
                tally.add(slot(ofSpelling: spelling), field: position, fieldCount: fields.count)
            }
            if latin { continue }
            WordTokenizer.forEachWord(text, ascii: { word in
                tally.add(slot(of: word), field: position, fieldCount: fields.count)
            }, other: { scalars in
                let hash = ScalarTable<Int>.hash(scalars)
                let slot: Int
                if let known = raw.find(scalars, hash: hash) {
                    slot = known
                } else {
                    slot = self.slot(of: WordFolding.fold(scalars, hash: hash))
                    raw.insert(scalars, hash: hash, value: slot)
                }
                tally.add(slot, field: position, fieldCount: fields.count)
            })
        }
    }

    /// The slot of the word spelled `spelling` (a word's UTF-8 bytes as the Latin path found
    /// them), folded and remembered if new.
    private func slot(ofSpelling spelling: UnsafeBufferPointer<UInt8>) -> Int {
        let hash = SpellingTable.hash(spelling)
        if let known = spellings.find(spelling, hash: hash) { return known }
        let slot = self.slot(of: WordTokenizer.foldedLatinWord(spelling))
        spellings.remember(spelling, hash: hash, slot: slot)
        return slot
    }
}

/// A store's vocabularies not in use by a transaction (``WordVocabulary``): usually one, more
/// only while several transactions of the store run at once (each in its own store handle).
final class WordVocabularyPool: Sendable {
    private let idle = Mutex<[WordVocabulary]>([])

    /// A vocabulary for one transaction: an idle one, or a new one.
    func take() -> WordVocabulary {
        idle.withLock { $0.popLast() } ?? WordVocabulary()
    }

    /// Gives back a vocabulary whose transaction ended; one grown past its capacity (of words,
    /// or four times that of spellings) is dropped.
    func give(_ vocabulary: WordVocabulary) {
        guard vocabulary.words.count <= WordVocabulary.capacity,
              vocabulary.spellingCount <= 4 * WordVocabulary.capacity else { return }
        idle.withLock { $0.append(vocabulary) }
    }
}

/// One row's words as slots of a ``WordVocabulary``, each once, with `fieldCount` counts: a
/// slot's place is found through arrays indexed by slot and stamped per row, not a table per row.
struct RowTally {
    private(set) var slots: [Int32] = []
    private(set) var counts: [UInt32] = []
    private var position: [Int32] = []
    private var stamp: [UInt32] = []
    private var current: UInt32 = 0

    /// Starts a row: no word yet.
    mutating func begin() {
        slots.removeAll(keepingCapacity: true)
        counts.removeAll(keepingCapacity: true)
        current &+= 1
        if current == 0 {
            // The stamps wrapped: none may look current.
            for i in stamp.indices { stamp[i] = 0 }
            current = 1
        }
    }

    mutating func add(_ slot: Int, field: Int, fieldCount: Int) {
        if stamp.count <= slot {
            stamp.append(contentsOf: repeatElement(0, count: slot + 1 - stamp.count))
            position.append(contentsOf: repeatElement(0, count: slot + 1 - position.count))
        }
        if stamp[slot] != current {
            stamp[slot] = current
            position[slot] = Int32(truncatingIfNeeded: slots.count)
            slots.append(Int32(truncatingIfNeeded: slot))
            for _ in 0..<fieldCount { counts.append(0) }
        }
        counts[Int(position[slot]) * fieldCount + field] &+= 1
    }

    /// The counts of the word in `slot`, when the row holds it.
    func counts(of slot: Int, fieldCount: Int) -> ArraySlice<UInt32>? {
        guard slot < stamp.count, stamp[slot] == current else { return nil }
        let at = Int(position[slot]) * fieldCount
        return counts[at..<(at + fieldCount)]
    }
}
