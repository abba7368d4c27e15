import Testing
@testable import StrataStorage

/// A walk a leaf at a time (`Cursor.restOfLeaf()`, then `next()`) visits exactly the entries
/// a walk entry by entry does, overflow values included, from any starting point, in a
/// snapshot and in a write transaction; a leaf taken before its tree changed lends nothing.
@Suite struct LeafEntriesTests {
    /// Every entry of `cursor`'s tree from its position on, by leaves.
    private static func walkByLeaves(_ cursor: Cursor, from start: [UInt8]?) throws -> [([UInt8], [UInt8])] {
        var out: [([UInt8], [UInt8])] = []
        var leaves = 0
        var ok = try start.map { try cursor.seek($0) } ?? cursor.first()
        while ok {
            let leaf = try cursor.restOfLeaf()
            #expect(!leaf.indices.isEmpty)
            for i in leaf.indices {
                let key = [UInt8](leaf.key(i))
                let value = try leaf.inlineValue(i).map { [UInt8]($0) } ?? leaf.value(i)
                #expect(try leaf.value(i) == value)
                out.append((key, value))
            }
            // The cursor rests after the entries taken, on none; every other leaf, `previous()`
            // lands on the leaf's last entry, and `next()` goes on from there either way.
            #expect(!cursor.isValid && cursor.copyKey().isEmpty && cursor.value.isEmpty)
            #expect(throws: StrataError.self) { _ = try cursor.copyValue() }
            #expect(try cursor.restOfLeaf().indices.isEmpty)
            leaves += 1
            if leaves % 2 == 0 {
                #expect(try cursor.previous())
                #expect(cursor.copyKey() == out.last?.0)
                #expect(try cursor.copyValue() == out.last?.1)
            }
            ok = try cursor.next()
        }
        return out
    }

    @Test(arguments: [UInt64(20_261_129), 20_261_130])
    func aWalkByLeavesSeesEveryEntryInOrder(seed: UInt64) throws {
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: relOptions(fs))
        var rng = SeededRandom(seed: seed)
        var model: [[UInt8]: [UInt8]] = [:]
        try store.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<4_000 where rng.next() % 4 != 0 {
                // One value in twenty beyond a 4 KiB page's inline limit.
                let v = randomBytes(rng.next() % 20 == 0 ? 1_500 + Int(rng.next() % 2_000) : Int(rng.next() % 90), &rng)
                try t.put(key(i), v)
                model[key(i)] = v
            }
        }
        let expected = model.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        for start in [nil, key(0), key(1_234), key(3_999), key(5_000)] {
            let wanted = expected.filter { start == nil || !$0.key.lexicographicallyPrecedes(start!) }
            let snapshot = try store.snapshot()
            let read = try Self.walkByLeaves(try #require(try snapshot.tree("t")).makeCursor(), from: start)
            snapshot.close()
            #expect(read.map(\.0) == wanted.map(\.key), "seed \(seed)")
            #expect(read.map(\.1) == wanted.map(\.value), "seed \(seed)")
            try store.write { tx in
                let written = try Self.walkByLeaves(try #require(try tx.tree("t")).makeCursor(), from: start)
                #expect(written.map(\.0) == wanted.map(\.key), "seed \(seed)")
                #expect(written.map(\.1) == wanted.map(\.value), "seed \(seed)")
            }
        }
        try store.close()
    }

    /// A leaf of a write transaction taken before a put lends empty bytes and no values after
    /// it, and the cursor's next move throws `cursorInvalidated`.
    @Test func aLeafTakenBeforeAWriteLendsNothing() throws {
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: relOptions(fs))
        try store.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<50 { try t.put(key(i), [UInt8(i)]) }
            let cursor = t.makeCursor()
            try cursor.first()
            let leaf = try cursor.restOfLeaf()
            #expect(leaf.key(0) .count == key(0).count)
            #expect(leaf.key(leaf.indices.upperBound).isEmpty)
            try t.put(key(100), [1])
            #expect(leaf.key(0).isEmpty)
            #expect(leaf.inlineValue(0) == nil)
            #expect(throws: StrataError.cursorInvalidated) { _ = try leaf.value(0) }
            #expect(throws: StrataError.cursorInvalidated) { try cursor.next() }
            #expect(throws: StrataError.cursorInvalidated) { _ = try cursor.restOfLeaf() }
        }
        try store.close()
    }
}
