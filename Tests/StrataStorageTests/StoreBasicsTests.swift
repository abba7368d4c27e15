import Testing
@testable import StrataStorage

@Suite struct StoreBasicsTests {
    @Test func crc32cKnownVector() {
        #expect(CRC32C.checksum(bytes("123456789")) == 0xE306_9283)
        // Long input exercises the three-stream path; compare with byte-at-a-time pieces.
        var rng = SeededRandom(seed: 7)
        let data = randomBytes(100_000, &rng)
        var piecewise: UInt32 = 0
        for chunk in stride(from: 0, to: data.count, by: 997) {
            piecewise = CRC32C.checksum(Array(data[chunk..<min(chunk + 997, data.count)]), extending: piecewise)
        }
        #expect(CRC32C.checksum(data) == piecewise)
    }

    @Test func putGetDeleteAcrossReopen() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("a.strata")
        do {
            let store = try Store(path: path, options: testOptions())
            try store.write { tx in
                let t = try tx.treeCreatingIfMissing("main")
                for i in 0..<5000 { try t.put(key(i), bytes("value \(i)")) }
                #expect(try t.delete(key(10)))
                #expect(try !t.delete(key(999_999)))
            }
            try store.read { (tx) throws in
                let t = try #require(try tx.tree("main"))
                #expect(try t.count == 4999)
                #expect(try t.get(key(11)) == bytes("value 11"))
                #expect(try t.get(key(10)) == nil)
            }
            try store.close()
        }
        let store = try Store(path: path, options: testOptions())
        try store.read { (tx) throws in
            let t = try #require(try tx.tree("main"))
            #expect(try t.count == 4999)
            #expect(try t.get(key(4998)) == bytes("value 4998"))
            #expect(try t.get(key(10)) == nil)
        }
        let report = try store.check()
        #expect(report.isClean, "\(report.problems)")
        try store.close()
    }

    /// `treeCreatingIfMissing` gives the existing tree with its entries, creates a missing one
    /// (committed with the transaction), and refuses a name `createTree` refuses.
    @Test func treeCreatingIfMissingOpensOrCreates() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let store = try Store(path: dir.file("t.strata"), options: testOptions())
        defer { try? store.close() }
        try store.write { tx in
            let made = try tx.treeCreatingIfMissing("made")
            try made.put(key(1), bytes("one"))
            #expect(try tx.treeCreatingIfMissing("made").get(key(1)) == bytes("one"))
            #expect(throws: StrataError.self) { try tx.treeCreatingIfMissing("") }
        }
        try store.read { (tx) throws in
            #expect(try tx.tree("made")?.get(key(1)) == bytes("one"))
        }
    }

    @Test func replayWithoutCheckpoint() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("b.strata")
        var options = testOptions()
        options.compactOnCloseGarbageRatio = 1
        do {
            let store = try Store(path: path, options: options)
            for batch in 0..<20 {
                try store.write { tx in
                    let t = try tx.treeCreatingIfMissing("t")
                    for i in 0..<100 { try t.put(key(batch * 100 + i), bytes("v\(batch)")) }
                }
            }
            // Simulate a crash: no close, no checkpoint. Release the lock by dropping it.
            store.abandonForTesting()
        }
        let store = try Store(path: path, options: options)
        try store.read { (tx) throws in
            let t = try #require(try tx.tree("t"))
            #expect(try t.count == 2000)
            #expect(try t.get(key(1999)) == bytes("v19"))
        }
        #expect(try store.check().isClean)
        try store.close()
    }

    @Test func cursorsBothWays() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let store = try Store(path: dir.file("c.strata"), options: testOptions(.normal))
        try store.write { tx in
            let t = try tx.treeCreatingIfMissing("t")
            for i in stride(from: 0, to: 20000, by: 2) { try t.put(key(i), key(i)) }
        }
        try store.read { (tx) throws in
            let t = try #require(try tx.tree("t"))
            let c = t.makeCursor()
            var n = 0
            var ok = try c.first()
            var last: [UInt8] = []
            while ok { #expect(compareBytes(last, c.copyKey()) < 0); last = c.copyKey(); n += 1; ok = try c.next() }
            #expect(n == 10000)
            ok = try c.last()
            n = 0
            while ok { n += 1; ok = try c.previous() }
            #expect(n == 10000)
            #expect(try c.seek(key(101)))
            #expect(c.copyKey() == key(102))
            #expect(try c.seekBackward(key(101)))
            #expect(c.copyKey() == key(100))
            let range = try t.entries(from: key(100), to: key(110))
            #expect(range.map(\.key) == [key(100), key(102), key(104), key(106), key(108)])
            let rev = try t.entries(from: key(100), to: key(110), reverse: true)
            #expect(rev.map(\.key) == [key(108), key(106), key(104), key(102), key(100)])
        }
        try store.close()
    }

    @Test func largeValuesAndDeletesShrink() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("d.strata")
        var rng = SeededRandom(seed: 3)
        let big = randomBytes(3 << 20, &rng)
        let store = try Store(path: path, options: testOptions())
        try store.write { tx in
            let t = try tx.treeCreatingIfMissing("blobs")
            try t.put(bytes("big"), big)
            try t.put(bytes("medium"), randomBytes(5000, &rng))
            #expect(try t.get(bytes("big")) == big)
        }
        #expect(throws: StrataError.self) {
            try store.write { tx in try tx.tree("blobs")!.put(bytes("x"), [UInt8](repeating: 0, count: StoreLimits.maxValueLength + 1)) }
        }
        try store.write { tx in
            let t = try tx.treeCreatingIfMissing("n")
            for i in 0..<20000 { try t.put(key(i), [UInt8](repeating: 7, count: 50)) }
        }
        try store.write { tx in
            let t = try tx.tree("n")!
            for i in 0..<19990 { try t.delete(key(i)) }
        }
        try store.read { (tx) throws in
            #expect(try tx.tree("blobs")!.get(bytes("big")) == big)
            #expect(try tx.tree("n")!.count == 10)
        }
        let report = try store.check()
        #expect(report.isClean, "\(report.problems)")
        try store.compact()
        #expect(try store.check().isClean)
        try store.close()
        let reopened = try Store(path: path, options: testOptions())
        try reopened.read { (tx) throws in
            #expect(try tx.tree("blobs")!.get(bytes("big")) == big)
            #expect(try tx.tree("n")!.count == 10)
        }
        try reopened.close()
    }

    @Test func secondWriterIsLocked() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("e.strata")
        let store = try Store(path: path)
        #expect(throws: StrataError.locked(path: Store.lockPath(for: path))) { _ = try Store(path: path) }
        var ro = StoreOptions()
        ro.readOnly = true
        let reader = try Store(path: path, options: ro)
        try reader.close()
        try store.close()
    }
}
