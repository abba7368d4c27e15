import Testing
@testable import StrataStorage

/// The shortcuts point reads and in-place updates take: a snapshot cursor's seek within the leaf
/// it rests on, and a leaf cell replaced without moving the others. Each is checked against the
/// path it shortcuts, over generated keys, seek orders and value sizes (seeds printed on failure).
@Suite struct PointSeekTests {
    /// A key of `i` with a gap between stored keys, so that probes fall between them too.
    static func stored(_ i: Int) -> [UInt8] { key(i * 3) }

    /// A store in `dir` whose tree "t" holds ``stored(_:)`` of `0..<count`, each with value `v<i>`.
    static func storeOfStoredKeys(in dir: TempDir, count: Int) throws -> Store {
        let store = try Store(path: dir.file("s.strata"), options: testOptions(.normal))
        try store.write { tx in
            let t = try tx.treeCreatingIfMissing("t")
            for i in 0..<count { try t.put(stored(i), bytes("v\(i)")) }
        }
        return store
    }

    /// Seeks on one reused cursor land where a fresh cursor's seek lands, in ascending runs
    /// (mostly within a leaf), at random, on misses between keys, before the first and after
    /// the last; a move after a seek within a leaf continues from the right place.
    @Test(arguments: [UInt64(11), 12, 13])
    func aReusedCursorSeeksWhereAFreshOneDoes(seed: UInt64) throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let count = 3_000
        let store = try Self.storeOfStoredKeys(in: dir, count: count)
        defer { try? store.close() }
        var rng = SeededRandom(seed: seed)
        try store.read { (tx) throws in
            let tree = try #require(try tx.tree("t"))
            let reused = tree.makeCursor()
            var probes: [Int] = []
            for _ in 0..<60 {
                switch Int.random(in: 0..<4, using: &rng) {
                case 0:  // an ascending run, mostly within one leaf
                    var at = Int.random(in: -2..<(count * 3 + 2), using: &rng)
                    for _ in 0..<Int.random(in: 1..<40, using: &rng) {
                        probes.append(at)
                        at += Int.random(in: 0..<5, using: &rng)
                    }
                case 1: probes.append(Int.random(in: 0..<(count * 3), using: &rng))
                case 2: probes.append(contentsOf: [0, count * 3 - 3, count * 3 + 5])
                default:  // a descending run
                    var at = Int.random(in: 0..<(count * 3), using: &rng)
                    for _ in 0..<Int.random(in: 1..<20, using: &rng) {
                        probes.append(at)
                        at -= Int.random(in: 1..<4, using: &rng)
                    }
                }
            }
            for (n, p) in probes.enumerated() {
                let k = p < 0 ? [UInt8(ascii: "/")] : key(p)
                let fresh = tree.makeCursor()
                let expected = try fresh.seek(k)
                let got = try reused.seek(k)
                #expect(got == expected, "seed \(seed) probe \(n) (\(p))")
                guard got == expected, got else { continue }
                #expect(Array(reused.key) == Array(fresh.key), "seed \(seed) probe \(n) (\(p))")
                #expect(Array(reused.value) == Array(fresh.value), "seed \(seed) probe \(n) (\(p))")
                // Every few probes, a step either way must agree too (the path above the leaf
                // is the one the shortcut kept).
                if n % 7 == 0 {
                    let forwards = n % 2 == 0
                    let a = forwards ? try reused.next() : try reused.previous()
                    let b = forwards ? try fresh.next() : try fresh.previous()
                    #expect(a == b, "seed \(seed) probe \(n): step")
                    if a && b { #expect(Array(reused.key) == Array(fresh.key), "seed \(seed) probe \(n): step") }
                }
            }
        }
    }

    /// A leaf read from a key without a path (``Cursor/leafEntries(from:)``) holds what a fresh
    /// cursor's seek and the rest of its leaf hold: for stored keys, keys between them, before
    /// the first and after the last, on a snapshot and in a write transaction whose tree changed;
    /// and the reused cursor still seeks and walks as a fresh one afterwards.
    @Test(arguments: [UInt64(31), 32])
    func aLeafFromAKeyIsTheRestOfTheLeafASeekReaches(seed: UInt64) throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let count = 3_000
        let store = try Self.storeOfStoredKeys(in: dir, count: count)
        defer { try? store.close() }
        try store.write { tx in _ = try tx.treeCreatingIfMissing("empty") }
        var rng = SeededRandom(seed: seed)
        let probes = (0..<200).map { _ in Int.random(in: -2..<(count * 3 + 4), using: &rng) }
        func check(_ makeCursor: () -> Cursor, _ label: String) throws {
            let reused = makeCursor()
            for (n, p) in probes.enumerated() {
                let k = p < 0 ? [UInt8(ascii: "/")] : key(p)
                let entries = try k.withUnsafeBytes { try reused.leafEntries(from: $0) }
                let fresh = makeCursor()
                var expected: [[UInt8]] = []
                var startsALeaf = true
                if try fresh.seek(k) {
                    let rest = try fresh.restOfLeaf()
                    expected = rest.indices.map { Array(rest.key($0)) }
                    startsALeaf = rest.indices.lowerBound == 0
                }
                let got = entries.indices.map { Array(entries.key($0)) }
                if got.isEmpty {
                    // Only a key above every key of its leaf reads nothing here: the first key
                    // ≥ it (if any) then starts the next leaf, where a seek lands.
                    #expect(startsALeaf, "seed \(seed) \(label) probe \(n) (\(p)): nothing read")
                } else {
                    #expect(got == expected, "seed \(seed) \(label) probe \(n) (\(p))")
                }
                if let first = got.first { #expect(first.lexicographicallyPrecedes(k) == false, "seed \(seed) \(label) probe \(n)") }
                #expect(!reused.isValid, "seed \(seed) \(label) probe \(n): rests on no entry")
                if n % 5 == 0 {
                    let a = try reused.seek(k)
                    let other = makeCursor()
                    let b = try other.seek(k)
                    #expect(a == b, "seed \(seed) \(label) probe \(n): seek after")
                    if a && b {
                        #expect(Array(reused.key) == Array(other.key), "seed \(seed) \(label) probe \(n): seek after")
                        #expect(try reused.next() == other.next(), "seed \(seed) \(label) probe \(n): next")
                        if reused.isValid { #expect(Array(reused.key) == Array(other.key)) }
                    }
                }
            }
        }
        try store.read { tx in
            let tree = try #require(try tx.tree("t"))
            try check({ tree.makeCursor() }, "snapshot")
            let empty = try #require(try tx.tree("empty"))
            #expect(try key(1).withUnsafeBytes { try empty.makeCursor().leafEntries(from: $0) }.indices.isEmpty)
        }
        try store.write { tx in
            let t = try tx.treeCreatingIfMissing("t")
            for i in stride(from: 0, to: count, by: 3) { try t.put(key(i * 3 + 1), bytes("w\(i)")) }
            try check({ t.makeCursor() }, "write transaction")
        }
    }

    /// A search head is the first 8 bytes of a key, big-endian, zero-padded when the key is
    /// shorter: every length from none to more than 8 gives the word a byte-at-a-time reading
    /// gives (the short keys read through their own path).
    @Test func searchHeadsOfShortKeysAreZeroPadded() {
        var rng = SeededRandom(seed: 41)
        for length in 0...12 {
            for _ in 0..<50 {
                let bytes = randomBytes(length, &rng)
                var expected: UInt64 = 0
                for i in 0..<8 { expected = expected << 8 | (i < length ? UInt64(bytes[i]) : 0) }
                let got = bytes.withUnsafeBytes { Page.head(Page.keyAddress($0), count: length) }
                #expect(got == expected, "length \(length): \(bytes)")
            }
        }
    }

    /// A cursor whose snapshot ended refuses a seek the shortcut could have answered.
    @Test func aSeekAfterTheSnapshotEndedThrows() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let store = try Store(path: dir.file("s.strata"), options: testOptions(.normal))
        defer { try? store.close() }
        try store.write { tx in
            let t = try tx.treeCreatingIfMissing("t")
            for i in 0..<100 { try t.put(Self.stored(i), bytes("v\(i)")) }
        }
        let tx = try store.snapshot()
        let cursor = try #require(try tx.tree("t")).makeCursor()
        #expect(try cursor.seek(Self.stored(10)))
        tx.close()
        #expect(throws: StrataError.self) { try cursor.seek(Self.stored(11)) }
    }

    // MARK: Replacing a leaf cell

    /// A leaf filled with `count` cells of keys `key(i)` and values of `valueLength` bytes.
    static func leaf(count: Int, valueLength: Int) -> Page {
        let p = Page(pageSize: 4096, kind: Format.pageKindLeaf, level: 0, owner: 0)
        for i in 0..<count {
            let value = [UInt8](repeating: UInt8(i & 0xFF), count: valueLength)
            let ok = key(i).withUnsafeBytes { k in value.withUnsafeBytes { p.insertLeafCell(at: i, key: k, value: $0, overflowLength: nil) } }
            precondition(ok)
        }
        return p
    }

    /// The page's cells as (key, value) pairs, read back through an encoded and decoded image
    /// (which checks every cell and offset).
    static func cells(of page: Page) throws -> [([UInt8], [UInt8])] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let copy = try buffer.withUnsafeMutableBytes {
            try Page.decodeImage(page.encodeImage(into: $0), pageSize: 4096, offset: 4096)
        }
        return (0..<copy.count).map { (Array(copy.key($0)), Array(copy.valueBytes($0))) }
    }

    @Test func aCellIsReplacedInPlaceOrRewrittenOrGrownOrNotAtAll() throws {
        let page = Self.leaf(count: 40, valueLength: 20)
        var model = try Self.cells(of: page)
        func replace(_ i: Int, length: Int) -> Bool {
            let value = [UInt8](repeating: 0xAB, count: length)
            let done = key(i).withUnsafeBytes { k in value.withUnsafeBytes { page.replaceLeafCell(at: i, key: k, value: $0, overflowLength: nil) } }
            if done { model[i].1 = value }
            return done
        }
        // Smaller: in place, its spare bytes fragmented.
        #expect(replace(3, length: 5))
        #expect(page.fragmented == 15)
        // Larger, with contiguous room for the whole cell: written afresh below the others,
        // its old bytes fragmented; no other cell or slot moves.
        func size(_ i: Int, _ length: Int) -> Int { Page.leafCellSize(keyLength: key(i).count, valueLength: length) }
        let free = page.contiguousFree
        #expect(replace(7, length: 30))
        #expect(page.contiguousFree == free - size(7, 30))
        #expect(page.fragmented == 15 + size(7, 20))
        #expect(try Self.cells(of: page).elementsEqual(model, by: ==))
        // The cell stored lowest (that one, now) grows where it is, by the growth alone.
        let lowestFree = page.contiguousFree, lowestFragmented = page.fragmented
        #expect(replace(7, length: 34))
        #expect(page.contiguousFree == lowestFree - 4)
        #expect(page.fragmented == lowestFragmented)
        // The highest is written afresh too.
        #expect(replace(0, length: 26))
        #expect(page.contiguousFree == lowestFree - 4 - size(0, 26))
        #expect(page.fragmented == lowestFragmented + size(0, 20))
        #expect(try Self.cells(of: page).elementsEqual(model, by: ==))
        // Growing by more than the contiguous room: refused, the page unchanged.
        let before = try Self.cells(of: page)
        #expect(!replace(9, length: 20 + page.contiguousFree + 1))
        #expect(try Self.cells(of: page).elementsEqual(before, by: ==))
        #expect(try Self.cells(of: page).elementsEqual(model, by: ==))
    }

    /// A page nearly full: a cell grows by exactly the contiguous room, which is then gone.
    @Test func aCellGrowsByExactlyTheRoomLeft() throws {
        let page = Self.leaf(count: 40, valueLength: 80)
        var model = try Self.cells(of: page)
        let room = page.contiguousFree
        try #require(room > 0 && room < 400, "the page is nearly full")
        let value = [UInt8](repeating: 0xCD, count: 80 + room)
        let done = key(9).withUnsafeBytes { k in value.withUnsafeBytes { page.replaceLeafCell(at: 9, key: k, value: $0, overflowLength: nil) } }
        #expect(done)
        model[9].1 = value
        #expect(page.contiguousFree == 0)
        #expect(page.fragmented == 0)
        #expect(try Self.cells(of: page).elementsEqual(model, by: ==))
    }

    /// Random replacements of random sizes, falling back to remove and insert as the tree does,
    /// keep the page's cells equal to a model's.
    @Test(arguments: [UInt64(21), 22, 23, 24])
    func randomReplacementsKeepThePageRight(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let page = Self.leaf(count: 60, valueLength: 30)
        var model = try Self.cells(of: page)
        for step in 0..<2_000 {
            let i = Int.random(in: 0..<60, using: &rng)
            let value = randomBytes(Int.random(in: 0..<40, using: &rng), &rng)
            let k = key(i)
            let replaced = k.withUnsafeBytes { kb in value.withUnsafeBytes { page.replaceLeafCell(at: i, key: kb, value: $0, overflowLength: nil) } }
            if !replaced {
                page.removeCell(at: i)
                let inserted = k.withUnsafeBytes { kb in value.withUnsafeBytes { page.insertLeafCell(at: i, key: kb, value: $0, overflowLength: nil) } }
                try #require(inserted, "seed \(seed) step \(step): 60 cells of at most 40 bytes fit a page")
            }
            model[i].1 = value
            #expect(page.totalFree == 4096 - Format.pageHeaderLength - 2 * 60 - model.reduce(0) { $0 + Format.leafCellHeader + $1.0.count + $1.1.count },
                    "seed \(seed) step \(step): free bytes")
            // Every step: a slot left behind by a move shows at once.
            #expect(try Self.cells(of: page).elementsEqual(model, by: ==), "seed \(seed) step \(step)")
        }
        #expect(try Self.cells(of: page).elementsEqual(model, by: ==), "seed \(seed)")
    }
}
