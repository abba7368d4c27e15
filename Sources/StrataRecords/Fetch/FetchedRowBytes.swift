/// The stored bytes of rows a fetch read, in one buffer: a span per primary key the fetch
/// returned, parallel to them.
package struct FetchedRowBytes: Sendable {
    /// Where one row's bytes are in `bytes` (`count` -1: not kept).
    package struct Span: Sendable {
        package var start: Int32
        package var count: Int32
    }

    package let bytes: [UInt8]
    /// Parallel to the fetch's primary keys; empty when the fetch read no rows.
    package let spans: [Span]
    /// How many of `spans` hold bytes (at most: after an offset, a limit or a filter, fewer).
    package let keptCount: Int

    /// Rows `spans` locates in `bytes`, at most `keptCount` of them kept.
    package init(bytes: [UInt8], spans: [Span], keptCount: Int) {
        self.bytes = bytes
        self.spans = spans
        self.keptCount = keptCount
    }

    /// Calls `body` with the bytes of the row at `index`; nil when they were not kept.
    package func withRow<R>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        let span = spans[index]
        guard span.count >= 0 else { return nil }
        return try bytes.withUnsafeBytes { all in
            try body(UnsafeRawBufferPointer(rebasing: all[Int(span.start)..<Int(span.start) + Int(span.count)]))
        }
    }

    /// The row at `index` decoded as `entity` lays it out; nil when it was not kept. Not
    /// generic, unlike ``withRow(at:_:)``: from another module, that one ran the standard
    /// library's unspecialized `withUnsafeBytes` for every row of a fetch (decision 75).
    package func decodeRow(at index: Int, of entity: EntityDescription) throws -> [StoredValue]? {
        try withRow(at: index) { try entity.decodeRow($0) }
    }
}
