/// What a fetch collects of the rows it reads for the keys it returns
/// (``RecordReader/fetchPrimaryKeysAndRowBytes(_:keepingAtMost:)``): their stored bytes, one
/// span per key taken, in the order taken.
final class FetchedRows {
    // Not checked for exclusivity at run time (three checks a row cost more than the copy):
    // only `add` and `dropLast` mutate them, with plain appends that call nothing else.
    @exclusivity(unchecked) var bytes: [UInt8] = []
    @exclusivity(unchecked) var spans: [FetchedRowBytes.Span] = []
    /// How many spans hold bytes.
    @exclusivity(unchecked) var keptCount = 0
    let maxBytes: Int

    init(maxBytes: Int) { self.maxBytes = maxBytes }

    /// Keeps a row's bytes (or, past `maxBytes`, a span that says they were not kept).
    func add(_ row: UnsafeRawBufferPointer) {
        guard row.count <= maxBytes - bytes.count, bytes.count + row.count <= Int(Int32.max) else {
            spans.append(FetchedRowBytes.Span(start: 0, count: -1))
            return
        }
        // Grown by doubling, but never past the bound: the buffer is held as it is.
        if bytes.count + row.count > bytes.capacity {
            bytes.reserveCapacity(min(max(bytes.capacity * 2, 4096, bytes.count + row.count), maxBytes))
        }
        spans.append(FetchedRowBytes.Span(start: Int32(bytes.count), count: Int32(row.count)))
        keptCount += 1
        bytes.append(raw: row)
    }

    /// Forgets the row kept last (one a predicate then refused).
    func dropLast() {
        guard let last = spans.popLast(), last.count >= 0 else { return }
        bytes.removeLast(Int(last.count))
        keptCount -= 1
    }
}
