import Testing
@testable import StrataStorage

/// `WriteTree.replaceValue(at:with:)`: a put of the cursor's key through the cursor's own
/// descent, the cursor staying on the entry when the value fits its leaf; an ordinary put
/// otherwise. Either way the tree, the log and every reader agree with a put.
@Suite struct CursorReplaceTests {
    /// Random replaces through one cursor (growing, shrinking, past the inline limit, over
    /// overflow values), between puts, deletes and seeks in key order and at random, in
    /// several transactions: the tree is the model after each, a snapshot taken before a
    /// transaction still reads what it read, and the reopened store (replaying the log) and
    /// its check agree.
    @Test(arguments: [UInt64(20_261_190), 20_261_191, 20_261_192])
    func replacesThroughTheCursorAgreeWithPuts(seed: UInt64) throws {
        let fs = SimulatedFileSystem()
        var store = try Store(path: relPath, options: relOptions(fs))
        var rng = SeededRandom(seed: seed)
        var model: [[UInt8]: [UInt8]] = [:]
        func value(_ length: Int) -> [UInt8] { randomBytes(length, &rng) }
        func length() -> Int {
            switch rng.next() % 10 {
            case 0: return 1_500 + Int(rng.next() % 2_000)  // beyond a 4 KiB page's inline limit
            case 1, 2: return 0
            default: return Int(rng.next() % 120)
            }
        }
        try store.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<3_000 where rng.next() % 3 != 0 {
                let v = value(length())
                try t.put(key(i), v)
                model[key(i)] = v
            }
        }
        var inPlace = 0, replaced = 0
        for round in 0..<6 {
            let before = model
            let snapshot = try store.snapshot()
            try store.write { tx in
                let t = try #require(try tx.tree("t"))
                let cursor = t.makeCursor()
                let other = t.makeCursor()
                var ok = try cursor.seek(key(Int(rng.next() % 3_000)))
                for _ in 0..<2_000 {
                    switch rng.next() % 10 {
                    case 0:
                        let k = key(Int(rng.next() % 3_000)), v = value(length())
                        try t.put(k, v)
                        model[k] = v
                    case 1:
                        let k = key(Int(rng.next() % 3_000))
                        _ = try t.delete(k)
                        model[k] = nil
                    case 2:
                        ok = try cursor.seek(key(Int(rng.next() % 3_000)))
                    case 3:
                        ok = try cursor.isValid ? cursor.next() : cursor.seek(key(Int(rng.next() % 3_000)))
                    default:
                        if !cursor.isValid { ok = try cursor.seek(key(Int(rng.next() % 3_000))) }
                        guard ok else { continue }
                        let k = cursor.copyKey(), v = value(length())
                        _ = try other.seek(k)
                        try v.withUnsafeBytes { try t.replaceValue(at: cursor, with: $0) }
                        model[k] = v
                        replaced += 1
                        // Another cursor of the tree never reads across a change.
                        #expect(!other.isValid, "seed \(seed) round \(round)")
                        if cursor.isValid {
                            inPlace += 1
                            #expect(try cursor.copyKey() == k && cursor.copyValue() == v, "seed \(seed) round \(round)")
                        }
                    }
                }
                #expect(try t.count == model.count, "seed \(seed) round \(round)")
            }
            // The snapshot kept what it read.
            do {
                let t = try #require(try snapshot.tree("t"))
                var seen = 0
                let c = t.makeCursor()
                var ok = try c.first()
                while ok {
                    #expect(try before[c.copyKey()] == c.copyValue(), "seed \(seed) round \(round): snapshot")
                    seen += 1
                    ok = try c.next()
                }
                #expect(seen == before.count, "seed \(seed) round \(round): snapshot")
            }
            snapshot.close()
            try expectTrees(of: store, hold: ["t": model], "seed \(seed) round \(round)")
        }
        #expect(inPlace > replaced / 2, "seed \(seed): most replaces fit their leaves (\(inPlace) of \(replaced))")
        #expect(inPlace < replaced, "seed \(seed): some fall back to a put")
        // Replayed from the log, then written by a checkpoint and read back.
        store = try reopen(store, fs)
        #expect(try store.check().isClean, "seed \(seed)")
        try expectTrees(of: store, hold: ["t": model], "seed \(seed): reopened")
        try store.checkpoint()
        store = try reopen(store, fs)
        try expectTrees(of: store, hold: ["t": model], "seed \(seed): after a checkpoint")
        try store.close()
    }

    /// A cursor of another tree, or one not on an entry, is refused with a typed error and
    /// changes nothing.
    @Test func aCursorNotOnAnEntryOfTheTreeIsRefused() throws {
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: relOptions(fs))
        try store.write { tx in
            let a = try tx.createTree("a"), b = try tx.createTree("b")
            try a.put(key(1), [1])
            try b.put(key(1), [2])
            let onB = b.makeCursor()
            #expect(try onB.first())
            let unpositioned = a.makeCursor()
            for cursor in [onB, unpositioned] {
                #expect(throws: StrataError.self) {
                    try [UInt8]([9]).withUnsafeBytes { try a.replaceValue(at: cursor, with: $0) }
                }
            }
            #expect(try a.get(key(1)) == [1] && b.get(key(1)) == [2])
        }
        try store.close()
    }

    /// The store as a crash leaves it (synced writes kept, nothing else), opened again.
    private func reopen(_ store: Store, _ fs: SimulatedFileSystem) throws -> Store {
        _ = store
        _ = fs.crash(policy: .keepAll(directory: .kept))
        return try Store(path: relPath, options: relOptions(fs))
    }
}
