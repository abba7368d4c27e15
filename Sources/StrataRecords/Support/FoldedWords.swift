/// Values found by words' raw scalars — their folded forms (``FoldedWords``), or a transaction's
/// slots for them (``PendingWords``): an open-addressing hash table whose keys are scalar arrays
/// hashed by their values (FNV-1a).
///
/// Why not `[String: String]`: Swift hashes and compares a non-ASCII `String` through its
/// normalized form, and a lookup first needs the `String` built from the scalars: a cost paid
/// for every word indexed, which dominated building a word index over accented text.
/// Here a lookup builds nothing and hashes the scalars as they are (canonically equivalent
/// spellings are different keys, each remembered with its own, equal, folded form).
///
/// Invariants: `keys.count == values.count` is 0 (nothing allocated yet: a folding made for
/// one row's evaluation costs nothing) or a power of two at least twice `count` (so a probe
/// always ends at an empty slot); a slot holds a key and its value, or neither.
struct ScalarTable<Value> {
    private var keys: [[Unicode.Scalar]?] = []
    private var values: [Value?] = []
    private(set) var count = 0

    static func hash(_ word: ArraySlice<Unicode.Scalar>) -> Int {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for scalar in word {
            h = (h ^ UInt64(scalar.value)) &* 0x0000_0100_0000_01B3
        }
        return Int(truncatingIfNeeded: h ^ (h >> 29))
    }

    /// The value remembered for `word` (whose ``hash(_:)`` is `hash`), or nil.
    func find(_ word: ArraySlice<Unicode.Scalar>, hash: Int) -> Value? {
        if keys.isEmpty { return nil }
        let mask = keys.count - 1
        var slot = hash & mask
        while let key = keys[slot] {
            if key.elementsEqual(word) { return values[slot] }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// Remembers `value` for `word`, which must not be remembered yet.
    mutating func insert(_ word: ArraySlice<Unicode.Scalar>, hash: Int, value: Value) {
        if 2 * (count + 1) > keys.count { grow() }
        let mask = keys.count - 1
        var slot = hash & mask
        while keys[slot] != nil { slot = (slot + 1) & mask }
        keys[slot] = Array(word)
        values[slot] = value
        count += 1
    }

    /// Forgets everything, keeping the table's size.
    mutating func removeAll() {
        for i in keys.indices { keys[i] = nil; values[i] = nil }
        count = 0
    }

    private mutating func grow() {
        let oldKeys = keys, oldValues = values
        let size = max(64, 2 * oldKeys.count)
        keys = Array(repeating: nil, count: size)
        values = Array(repeating: nil, count: size)
        count = 0
        for (i, key) in oldKeys.enumerated() {
            guard let key, let value = oldValues[i] else { continue }
            insert(key[...], hash: Self.hash(key[...]), value: value)
        }
    }
}

/// Folded forms of words by their raw scalars (``WordFolding``'s memories).
typealias FoldedWords = ScalarTable<String>
