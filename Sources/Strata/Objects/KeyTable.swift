/// Values by a one-word key (an object's primary key, a temporary identifier, an object's
/// address): an open-addressing table with Robin Hood linear probing and backward-shift deletion
/// (no tombstones), its capacity a power of two, at most three quarters full. The object layer's
/// one hash table: the registry, the row cache's positions, and a save's lookups (``ObjectSet``)
/// all use it.
///
/// Why not `Dictionary`: every registration, fault lookup and release hashed its key with
/// SipHash (`Hasher`), three hashes per fetched object (decision 47), and a save asks several
/// such questions per object (decision 50).
///
/// Why keys keep their order by default (decision 71): primary keys are mostly dense runs,
/// registered and released in key order (a fetch, the release of its array). A bucket that is the
/// key plus a per-process offset puts a run in consecutive buckets, so a fetch walks the table like
/// an array; a multiplicative hash scatters every key to its own cache line, so a large fetch
/// spent much of its time waiting on memory for the registry's lookups and removals, a cost
/// instruction counts do not show. Keys a file chose to collide (a stride of a power of two)
/// would make such buckets quadratic, so the first probe longer than ``longProbe`` switches the
/// table to the multiplicative hash (Fibonacci hashing: a multiply by 2^64/φ, the top bits) for
/// good (``scatters``): expected O(1) whatever the keys. A table whose keys are known not to be
/// runs (addresses, multiples of 16) scatters from the start.
///
/// Invariants: `entries.count` is 0 or a power of two and `mask == entries.count - 1`;
/// `count < entries.count` (an empty slot always ends a probe); an entry is empty exactly when
/// its element is nil; no empty slot lies between an entry and its ideal bucket, and an entry's
/// distance from its ideal bucket is at most one more than the entry's before it (Robin Hood's
/// invariant, kept by insertion swapping with richer entries and by
/// backward-shift deletion). So a lookup stops at an empty slot or at an entry nearer its
/// ideal bucket than the probe is to the key's, and a deletion stops at an entry in its own.
struct KeyTable<Element> {
    private struct Entry {
        var raw: Int64
        var object: Element?
    }

    private var entries: [Entry] = []
    private var mask = 0
    private var shift = 64
    private(set) var count = 0
    /// Whether keys are hashed (multiplicatively) rather than kept in order; set once a probe ran
    /// longer than ``longProbe``.
    private(set) var scatters = false

    /// The probe length past which keys are taken to collide on purpose (dense runs probe 0;
    /// keys spread at random by a good hash, a few).
    static var longProbe: Int { 48 }

    /// The process's offset, copied: reading the global on every probe went through its lazy
    /// initializer's `swift_once` check (decision 71).
    private let seed = rawKeySeed

    /// An empty table that holds `capacity` keys without growing; `scattered` hashes its keys from
    /// the start (for keys that are not runs, such as addresses).
    init(capacity: Int = 0, scattered: Bool = false) {
        scatters = scattered
        if capacity > 0 { reserveCapacity(capacity) }
    }

    @inline(__always)
    private func ideal(_ raw: Int64) -> Int {
        let bits = UInt64(bitPattern: raw) &+ seed
        if scatters { return Int(truncatingIfNeeded: (bits &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift)) }
        return Int(truncatingIfNeeded: bits) & mask
    }

    /// How far the entry in slot `i` sits from its ideal bucket.
    @inline(__always)
    private func distance(at i: Int) -> Int { (i &- ideal(entries[i].raw)) & mask }

    /// Where `raw` is, or nil.
    @inline(__always)
    private func find(_ raw: Int64) -> Int? {
        guard count > 0 else { return nil }
        var i = ideal(raw)
        var probed = 0
        while let _ = entries[i].object {
            if entries[i].raw == raw { return i }
            // Robin Hood: `raw` would have displaced an entry nearer its own bucket.
            if distance(at: i) < probed { return nil }
            i = (i &+ 1) & mask
            probed &+= 1
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
            insertAbsent(Entry(raw: raw, object: object))
        }
    }

    /// Inserts an entry whose key is not in the table (room is made by the caller). Should the
    /// key be there after all, its entry is replaced: Robin Hood meets it before displacing any.
    private mutating func insertAbsent(_ entry: Entry) {
        var carried = entry
        var i = ideal(carried.raw)
        var probed = 0
        var displaced = false
        while let _ = entries[i].object {
            if !displaced, entries[i].raw == carried.raw {
                entries[i] = carried
                return
            }
            let resident = distance(at: i)
            if resident < probed {
                swap(&carried, &entries[i])
                probed = resident
                displaced = true
            }
            i = (i &+ 1) & mask
            probed &+= 1
            if probed > Self.longProbe, !scatters {
                // Put what is carried down and spread every key from now on.
                scatters = true
                rehash(capacity: entries.count, adding: carried)
                return
            }
        }
        entries[i] = carried
        count += 1
    }

    /// Adds `object` under `raw`, which the caller just found absent (one probe instead of two;
    /// were it present, its element would be replaced).
    mutating func insert(_ object: Element, underAbsent raw: Int64) {
        if (count + 1) * 4 > entries.count * 3 { grow() }
        insertAbsent(Entry(raw: raw, object: object))
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
        var next = (hole &+ 1) & mask
        // Backward shift: the entries after the hole move back one until one sits in its own
        // bucket (or the probe ends).
        while let _ = entries[next].object, distance(at: next) > 0 {
            entries[hole] = entries[next]
            hole = next
            next = (next &+ 1) & mask
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

    private mutating func rehash(capacity: Int, adding extra: Entry? = nil) {
        let old = entries
        entries = Array(repeating: Entry(raw: 0, object: nil), count: capacity)
        mask = capacity - 1
        shift = 64 - capacity.trailingZeroBitCount
        count = 0
        for entry in old where entry.object != nil { insertAbsent(entry) }
        if let extra { insertAbsent(extra) }
    }

    /// The longest distance of an entry from its ideal bucket (tests).
    var longestProbe: Int { entries.indices.lazy.filter { entries[$0].object != nil }.map(distance(at:)).max() ?? 0 }

    /// Whether the Robin Hood invariant holds in every slot (tests).
    var keepsItsInvariants: Bool {
        guard !entries.isEmpty else { return count == 0 }
        var occupied = 0
        for i in entries.indices where entries[i].object != nil {
            occupied += 1
            let previous = (i &- 1) & mask
            let d = distance(at: i)
            // An entry away from its bucket has a neighbour before it, at most one nearer.
            if d > 0 && (entries[previous].object == nil || distance(at: previous) < d - 1) { return false }
        }
        return occupied == count && count < entries.count
    }
}

/// Mixed into every table's hash (see ``KeyTable``): random per process.
private let rawKeySeed = UInt64.random(in: .min ... .max)

/// Objects by identity (their addresses in a ``KeyTable``), for a save's membership questions
/// ("did this save write it?") without `Set<ObjectIdentifier>`'s SipHash. It holds its
/// objects, so no address is reused while it lives.
struct ObjectSet {
    private var table: KeyTable<ManagedObject>

    /// A set that holds `capacity` objects without growing.
    init(capacity: Int = 0) { table = KeyTable(capacity: capacity, scattered: true) }

    /// The key of `object`: its address.
    @inline(__always)
    static func address(_ object: ManagedObject) -> Int64 { Int64(Int(bitPattern: ObjectIdentifier(object))) }

    mutating func insert(_ object: ManagedObject) { table[Self.address(object)] = object }

    func contains(_ object: ManagedObject) -> Bool { table[Self.address(object)] === object }
}
