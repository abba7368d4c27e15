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

    /// Every registered object.
    var objects: [ManagedObject] { byEntity.flatMap { $0.elements.map { $0.takeUnretainedValue() } } }

    mutating func removeAll() { byEntity = [] }
}

/// Stored rows a fetch's scan read ahead of the faults it returned, as the stored bytes the
/// scan copied (decoded when a fault takes its row), by entity and primary key, from the
/// commit the context reads: a fault takes its row out.
///
/// Bounded: at most ``byteLimit`` bytes of rows at a time. A fetch of a million objects that
/// reads ten must not hold a million rows: a registered fault stays within its 128 bytes
/// (issue 10) and a fetch's memory within what its objects need. Faults beyond the bound read
/// their rows when they fire. Bytes rather than decoded rows (decision 48): a decoded row of a
/// few short strings costs ~250 bytes, its bytes ~50, so the same memory keeps five times the
/// rows, and rows no fault takes are never decoded.
struct RowCache {
    /// The most row bytes held at once (4 MiB: ~80,000 rows of ~50 bytes).
    static let byteLimit = 4 << 20

    /// Where a row's bytes are: which fetch's buffer, and the span in it.
    private struct Location {
        var buffer: Int32
        var start: Int32
        var count: Int32
    }

    private var buffers: [[UInt8]] = []
    private var byEntity: [RawKeyTable<Location>] = []
    /// Rows held, over every entity.
    private(set) var count = 0
    /// The bytes of the buffers held (rows taken included, until every row is taken).
    private(set) var byteCount = 0

    /// How many more bytes of rows may be held.
    var room: Int { max(0, Self.byteLimit - byteCount) }

    /// Keeps the rows a fetch read for those of `objects` (parallel to `rows.spans`) that are
    /// faults (objects already loaded keep their values).
    mutating func insert(_ rows: FetchedRowBytes, for objects: [ManagedObject], entity: Int) {
        guard !rows.spans.isEmpty, rows.bytes.count <= room, buffers.count < Int(Int32.max) else { return }
        if entity >= byEntity.count { byEntity += Array(repeating: RawKeyTable(), count: entity + 1 - byEntity.count) }
        let buffer = Int32(buffers.count)
        buffers.append(rows.bytes)
        byteCount += rows.bytes.count
        byEntity[entity].reserveCapacity(byEntity[entity].count + objects.count)
        let countBefore = count
        for (o, span) in zip(objects, rows.spans) where span.count >= 0 && o._flags.contains(.fault) {
            let before = byEntity[entity].count
            byEntity[entity][o._rawID] = Location(buffer: buffer, start: span.start, count: span.count)
            count += byEntity[entity].count - before
        }
        // No fault wanted a row of this fetch: its bytes are not held at all.
        if count == countBefore {
            buffers.removeLast()
            byteCount -= rows.bytes.count
        }
    }

    /// The row of `raw`, taken out of the cache and decoded with `entity`'s layout (nil: not
    /// held, or bytes that do not decode, which the fault's own read then reports).
    mutating func take(entity: EntityDescription, raw: Int64) -> [Value]? {
        guard count > 0, entity.index < byEntity.count, let at = byEntity[entity.index].removeValue(forKey: raw) else { return nil }
        count -= 1
        let row = buffers[Int(at.buffer)].withUnsafeBytes { all in
            try? entity.decodeRow(UnsafeRawBufferPointer(rebasing: all[Int(at.start)..<Int(at.start) + Int(at.count)]))
        }
        if count == 0 { removeAll() }
        return row
    }

    mutating func removeAll() {
        buffers = []
        byEntity = []
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
        guard var hole = find(raw) else { return nil }
        let removed = entries[hole].object
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
        return removed
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
