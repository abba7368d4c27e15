import Testing
import StrataStorage

/// The public forms that lend and take `RawSpan` (decision 59) read and write what the array forms
/// do, for values in the page and in overflow frames, and keep the array forms' limits.
@Suite struct SpanAPITests {
    /// A value large enough to live in an overflow frame (more than a quarter of a 4 KiB page).
    static let large = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }

    @Test func spansReadAndWriteWhatArraysDo() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let store = try Store(path: dir.file("span.strata"), options: testOptions())
        defer { try? store.close() }
        try store.write { tx in
            let tree = try #require(try tx.tree("t", createIfMissing: true))
            for index in 0..<200 { try tree.put(key(index).span.bytes, bytes("value \(index)").span.bytes) }
            try tree.put(key(500).span.bytes, Self.large.span.bytes)
            #expect(try tree.delete(key(7).span.bytes))
            #expect(try !tree.delete(key(7).span.bytes))
            // Inside the transaction the span shows the transaction's own writes.
            let length = try tree.withValue(forKey: key(500)) { $0.byteCount }
            #expect(length == Self.large.count)
            #expect(try tree.withValue(forKey: key(7).span.bytes) { $0.byteCount } == nil)
            let empty = [UInt8]()
            #expect(throws: StrataError.self) { try tree.put(empty.span.bytes, bytes("v").span.bytes) }
            let tooLong = [UInt8](repeating: 1, count: 1025)
            #expect(throws: StrataError.self) { try tree.put(tooLong.span.bytes, bytes("v").span.bytes) }
        }
        try store.read { tx in
            let tree = try #require(try tx.tree("t"))
            #expect(try tree.count == 200)
            for index in [0, 1, 100, 199] {
                let copied = try tree.withValue(forKey: key(index).span.bytes) { span in
                    (0..<span.byteCount).map { span.unsafeLoad(fromByteOffset: $0, as: UInt8.self) }
                }
                #expect(copied == bytes("value \(index)"))
            }
            let large = try tree.withValue(forKey: key(500)) { span in
                (0..<span.byteCount).map { span.unsafeLoad(fromByteOffset: $0, as: UInt8.self) }
            }
            #expect(large == Self.large)
            #expect(try tree.withValue(forKey: key(7)) { $0.byteCount } == nil)
            let cursor = tree.makeCursor()
            #expect(try cursor.seek(key(150).span.bytes))
            #expect(cursor.copyKey() == key(150))
            #expect(try !cursor.seek(key(600).span.bytes))
        }
    }
}
