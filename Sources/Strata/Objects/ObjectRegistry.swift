/// A context's registered objects, unowned, by entity and identity: one table per entity keyed
/// by the raw identity alone, so an entry is 16 bytes (a registered fault must stay small: a
/// combined entity-and-identity key made entries 24 bytes, about 50 bytes per fault with the
/// table's free buckets). Objects remove themselves when released.
struct ObjectRegistry {
    private var byEntity: [RawKeyTable<Unmanaged<ManagedObject>>] = []

    /// The object registered under `key`; setting nil removes it.
    subscript(key: ModelContext.Key) -> Unmanaged<ManagedObject>? {
        get { key.entity < byEntity.count ? byEntity[key.entity][key.raw] : nil }
        set {
            if key.entity >= byEntity.count {
                guard newValue != nil else { return }
                byEntity += Array(repeating: RawKeyTable(), count: key.entity + 1 - byEntity.count)
            }
            byEntity[key.entity][key.raw] = newValue
        }
    }

    @discardableResult
    mutating func removeValue(forKey key: ModelContext.Key) -> Unmanaged<ManagedObject>? {
        key.entity < byEntity.count ? byEntity[key.entity].removeValue(forKey: key.raw) : nil
    }

    /// Removes the entry under `key` if it is `object` (one probe: a released object unregisters
    /// itself, unless another object took its identity since).
    mutating func remove(_ key: ModelContext.Key, ifItIs object: ManagedObject) -> Bool {
        guard key.entity < byEntity.count else { return false }
        let address = Unmanaged.passUnretained(object).toOpaque()
        return byEntity[key.entity].removeValue(forKey: key.raw) { $0.toOpaque() == address }
    }

    /// Grows `entity`'s table to hold `count` objects, or as many as it holds already if that is
    /// more (a fetch of objects that are mostly registered adds few).
    mutating func reserveCapacity(_ count: Int, entity: Int) {
        guard entity >= 0, count > 0 else { return }
        if entity >= byEntity.count { byEntity += Array(repeating: RawKeyTable(), count: entity + 1 - byEntity.count) }
        byEntity[entity].reserveCapacity(max(count, byEntity[entity].count))
    }

    /// Every registered object.
    var objects: [ManagedObject] { byEntity.flatMap { $0.elements.map { $0.takeUnretainedValue() } } }

    mutating func removeAll() { byEntity = [] }
}

/// Stored rows a fetch's scan read ahead of the faults it returned, as the stored bytes the
/// scan copied (decoded when a fault takes its row), from the commit the context reads: a
/// fault takes its row out.
///
/// Kept per fetch, in the fetch's order: faults usually fire in the order the program walks the
/// results, so a fault finds its row at the fetch's cursor with no lookup at all; the first
/// one out of order builds an index of the fetch's identities (a hash table per fetched row
/// cost ~400 instructions per object and 24 bytes per row before any fault fired).
///
/// Bounded: at most ``byteLimit`` bytes of rows and ``fetchLimit`` fetches at a time. A fetch
/// of a million objects that reads ten must not hold a million rows: a registered fault stays
/// within its 128 bytes (issue 10) and a fetch's memory within what its objects need. Faults
/// beyond the bound read their rows when they fire. Bytes rather than decoded rows (decision
/// 48): a decoded row of a few short strings costs ~250 bytes, its bytes ~42, so the same
/// memory keeps about five times the rows, and rows no fault takes are never decoded.
struct RowCache {
    /// The most row bytes held at once (4 MiB: ~100,000 rows of the benchmark's ~42 bytes).
    static let byteLimit = 4 << 20
    /// The most fetches whose rows are held at once (the oldest goes first).
    static let fetchLimit = 8

    /// One fetch's rows. A class, so that a fault's take updates it in place.
    private final class Fetched {
        let entity: Int
        /// The fetch's identities, in its order.
        let raws: [Int64]
        /// Parallel to `raws`: where each row's bytes are in `bytes` (count -1: not held, or taken).
        @exclusivity(unchecked) var spans: [FetchedRowBytes.Span]
        let bytes: [UInt8]
        /// Where the next fault in the fetch's order is expected.
        @exclusivity(unchecked) var next = 0
        /// Positions by identity, built when a fault fires out of order.
        @exclusivity(unchecked) var positions: RawKeyTable<Int32>?
        /// Rows held and not taken yet.
        @exclusivity(unchecked) var remaining: Int

        init(entity: Int, raws: [Int64], spans: [FetchedRowBytes.Span], bytes: [UInt8], remaining: Int) {
            self.entity = entity
            self.raws = raws
            self.spans = spans
            self.bytes = bytes
            self.remaining = remaining
        }

        /// The position of `raw` among the rows still held, or nil.
        func position(of raw: Int64) -> Int? {
            if next < raws.count, raws[next] == raw { return next }
            if positions == nil {
                var table = RawKeyTable<Int32>()
                table.reserveCapacity(remaining)
                for (i, r) in raws.enumerated() where spans[i].count >= 0 { table[r] = Int32(i) }
                positions = table
            }
            return positions?[raw].map { Int($0) }
        }
    }

    private var fetches: [Fetched] = []
    /// Rows held, over every fetch.
    private(set) var count = 0
    /// The bytes of the fetches held (rows taken included, until every row of a fetch is taken).
    private(set) var byteCount = 0

    /// How many more bytes of rows may be held.
    var room: Int { max(0, Self.byteLimit - byteCount) }

    /// Keeps the rows a fetch of `entity` read (`rows`, parallel to `raws` and `objects`) for
    /// those of its objects that are faults (objects already loaded keep their values).
    mutating func insert(_ rows: FetchedRowBytes, raws: [Int64], objects: [ManagedObject], entity: Int) {
        guard rows.keptCount > 0, rows.spans.count == objects.count, rows.bytes.count <= room else { return }
        // Only the rows held, in the fetch's order: a fetch of a million objects keeps ~80,000,
        // and arrays parallel to all of them would cost 16 bytes per fault.
        var heldRaws: [Int64] = []
        var heldSpans: [FetchedRowBytes.Span] = []
        heldRaws.reserveCapacity(min(rows.keptCount, objects.count))
        heldSpans.reserveCapacity(min(rows.keptCount, objects.count))
        for (i, o) in objects.enumerated() where rows.spans[i].count >= 0 && o._flags.contains(.fault) {
            heldRaws.append(raws[i])
            heldSpans.append(rows.spans[i])
        }
        guard !heldRaws.isEmpty else { return }
        if fetches.count == Self.fetchLimit { drop(at: 0) }
        fetches.append(Fetched(entity: entity, raws: heldRaws, spans: heldSpans, bytes: rows.bytes, remaining: heldRaws.count))
        count += heldRaws.count
        byteCount += rows.bytes.count
    }

    /// The row of `raw`, taken out of the cache and decoded with `entity`'s layout (nil: not
    /// held, or bytes that do not decode, which the fault's own read then reports).
    mutating func take(entity: EntityDescription, raw: Int64) -> [StoredValue]? {
        guard count > 0 else { return nil }
        for (f, fetched) in fetches.enumerated() where fetched.entity == entity.index {
            guard let i = fetched.position(of: raw) else { continue }
            let span = fetched.spans[i]
            guard span.count >= 0 else { continue }
            fetched.spans[i].count = -1
            fetched.next = i + 1
            fetched.remaining -= 1
            count -= 1
            let row = fetched.bytes.withUnsafeBytes { all in
                try? entity.decodeRow(UnsafeRawBufferPointer(rebasing: all[Int(span.start)..<Int(span.start) + Int(span.count)]))
            }
            if fetched.remaining == 0 { drop(at: f) }
            return row
        }
        return nil
    }

    private mutating func drop(at index: Int) {
        let fetched = fetches.remove(at: index)
        count -= fetched.remaining
        byteCount -= fetched.bytes.count
    }

    mutating func removeAll() {
        fetches = []
        count = 0
        byteCount = 0
    }
}

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
        for e in old where e.object != nil { self[e.raw] = e.object }
    }
}

/// Mixed into every table's hash (see ``RawKeyTable``): random per process.
private let rawKeySeed = UInt64.random(in: .min ... .max)
