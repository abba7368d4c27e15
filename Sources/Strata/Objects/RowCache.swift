/// Stored rows a fetch's scan read ahead of the faults it returned, as the stored bytes the
/// scan copied (decoded when a fault takes its row), from the commit the context reads: a
/// fault takes its row out.
///
/// Kept per fetch, in the fetch's order: faults usually fire in the order the program walks the
/// results, so a fault finds its row at the fetch's cursor with no lookup at all; the first
/// one out of order builds an index of the fetch's identities (a hash table filled for every
/// fetched row cost time and memory per object before any fault fired; decision 48).
///
/// Bounded: at most ``byteLimit`` bytes of rows and ``fetchLimit`` fetches at a time. A fetch
/// of a million objects that reads ten must not hold a million rows: a registered fault stays
/// within its 128 bytes and a fetch's memory within what its objects need. Faults beyond the
/// bound read their rows when they fire. Bytes rather than decoded rows (decision 48): a
/// decoded row of a few short strings takes several times the memory of its stored bytes, so
/// the same memory keeps several times the rows, and rows no fault takes are never decoded.
struct RowCache {
    /// The most row bytes held at once: 4 MiB, room for the rows of most fetches (decision 48).
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
        @exclusivity(unchecked) var positions: KeyTable<Int32>?
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
                var table = KeyTable<Int32>()
                table.reserveCapacity(remaining)
                for (i, heldRaw) in raws.enumerated() where spans[i].count >= 0 { table[heldRaw] = Int32(i) }
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
        // Only the rows held, in the fetch's order: a fetch of a million objects keeps only what
        // fits the bound, and arrays parallel to all of them would cost 16 bytes per fault.
        var heldRaws: [Int64] = []
        var heldSpans: [FetchedRowBytes.Span] = []
        heldRaws.reserveCapacity(min(rows.keptCount, objects.count))
        heldSpans.reserveCapacity(min(rows.keptCount, objects.count))
        for (i, object) in objects.enumerated() where rows.spans[i].count >= 0 && object._flags.contains(.fault) {
            heldRaws.append(raws[i])
            heldSpans.append(rows.spans[i])
        }
        guard !heldRaws.isEmpty else { return }
        if fetches.count == Self.fetchLimit { drop(at: 0) }
        fetches.append(Fetched(entity: entity, raws: heldRaws, spans: heldSpans, bytes: rows.bytes,
                               remaining: heldRaws.count))
        count += heldRaws.count
        byteCount += rows.bytes.count
    }

    /// The row of `raw`, taken out of the cache and decoded with `entity`'s layout (nil: not
    /// held, or bytes that do not decode, which the fault's own read then reports).
    mutating func take(entity: EntityDescription, raw: Int64) -> [StoredValue]? {
        guard count > 0 else { return nil }
        for (fetchIndex, fetched) in fetches.enumerated() where fetched.entity == entity.index {
            guard let i = fetched.position(of: raw) else { continue }
            let span = fetched.spans[i]
            guard span.count >= 0 else { continue }
            fetched.spans[i].count = -1
            fetched.next = i + 1
            fetched.remaining -= 1
            count -= 1
            let row = fetched.bytes.withUnsafeBytes { all in
                try? entity.decodeRow(UnsafeRawBufferPointer(
                    rebasing: all[Int(span.start)..<Int(span.start) + Int(span.count)]))
            }
            if fetched.remaining == 0 { drop(at: fetchIndex) }
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
