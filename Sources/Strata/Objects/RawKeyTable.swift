/// Values by raw identity (objects, rows): an open-addressing table with linear probing and
/// backward-shift deletion (no tombstones), its capacity a power of two, at most three
/// quarters full.
///
/// Why not `Dictionary`: every registration, fault lookup and release hashed its key with
/// SipHash (`Hasher`), ~650 instructions each and three per fetched object (callgrind,
/// `strata-bench objects` fetchall: 2.5K of the 18K instructions per object). Identities are
/// primary keys, mostly dense runs, which Fibonacci hashing (a multiply by 2^64/φ, the top bits)
/// spreads evenly; the process's random seed mixed in first keeps a file's chosen keys from
/// lining up in one run of buckets.
///
/// Invariants: `entries.count` is 0 or a power of two; `count < entries.count` (an empty slot
/// always ends a probe); an entry is empty exactly when its element is nil; each occupied entry
/// sits at or after its ideal bucket with no empty slot between them (the probe's invariant,
/// kept by backward-shift deletion).
struct RawKeyTable<Element> {
    private struct Entry {
        var raw: Int64
        var object: Element?
    }

    private var entries: [Entry] = []
    private var shift = 64
    private(set) var count = 0

    private static var seed: UInt64 { rawKeySeed }

    @inline(__always)
    private func ideal(_ raw: Int64) -> Int {
        Int(truncatingIfNeeded: ((UInt64(bitPattern: raw) ^ Self.seed) &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift))
    }

    /// Where `raw` is, or nil.
    @inline(__always)
    private func find(_ raw: Int64) -> Int? {
        guard count > 0 else { return nil }
        let mask = entries.count - 1
        var i = ideal(raw)
        while let _ = entries[i].object {
            if entries[i].raw == raw { return i }
            i = (i + 1) & mask
        }
        return nil
    }

    subscript(raw: Int64) -> Element? {
        get { find(raw).map { entries[$0].object! } }
        set {
            guard let object = newValue else {
                removeValue(forKey: raw)
                return
            }
            if let i = find(raw) {
                entries[i].object = object
                return
            }
            if (count + 1) * 4 > entries.count * 3 { grow() }
            let mask = entries.count - 1
            var i = ideal(raw)
            while entries[i].object != nil { i = (i + 1) & mask }
            entries[i] = Entry(raw: raw, object: object)
            count += 1
        }
    }

    @discardableResult
    mutating func removeValue(forKey raw: Int64) -> Element? {
        guard let i = find(raw) else { return nil }
        let removed = entries[i].object
        removeEntry(at: i)
        return removed
    }

    /// Removes the element under `raw` if `matches` accepts it, with one probe; returns whether
    /// it did.
    @inline(__always) @discardableResult
    mutating func removeValue(forKey raw: Int64, if matches: (Element) -> Bool) -> Bool {
        guard let i = find(raw), let element = entries[i].object, matches(element) else { return false }
        removeEntry(at: i)
        return true
    }

    private mutating func removeEntry(at index: Int) {
        var hole = index
        let mask = entries.count - 1
        var next = (hole + 1) & mask
        // Backward shift: an entry after the hole moves into it unless its ideal bucket lies
        // (cyclically) after the hole, up to its own slot.
        while let _ = entries[next].object {
            let home = ideal(entries[next].raw)
            let distanceFromHome = (next - home) & mask
            let distanceToHole = (next - hole) & mask
            if distanceFromHome >= distanceToHole {
                entries[hole] = entries[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        entries[hole] = Entry(raw: 0, object: nil)
        count -= 1
    }

    /// Every element in the table.
    var elements: [Element] { entries.compactMap(\.object) }

    /// Grows the table so that `count` elements fit without growing again.
    mutating func reserveCapacity(_ count: Int) {
        var capacity = max(16, entries.count)
        while count * 4 > capacity * 3 { capacity *= 2 }
        if capacity > entries.count { rehash(capacity: capacity) }
    }

    private mutating func grow() { rehash(capacity: max(16, entries.count * 2)) }

    private mutating func rehash(capacity: Int) {
        let old = entries
        entries = Array(repeating: Entry(raw: 0, object: nil), count: capacity)
        shift = 64 - capacity.trailingZeroBitCount
        count = 0
        for entry in old where entry.object != nil { self[entry.raw] = entry.object }
    }
}

/// Mixed into every table's hash (see ``RawKeyTable``): random per process.
private let rawKeySeed = UInt64.random(in: .min ... .max)
