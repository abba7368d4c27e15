import Testing
@testable import StrataStorage
#if canImport(Glibc)
import Glibc
#endif

/// Cursors over damaged trees, failing reads and odd shapes: a walk never goes backwards or
/// repeats, never hides a failed read behind empty bytes, and walks past empty leaves.
@Suite struct CursorWalkTests {
    // MARK: Trees built by hand

    static func leaf(_ keys: [Int]) -> Page {
        let p = Page(pageSize: 4096, kind: Format.pageKindLeaf, level: 0, owner: 0)
        for (i, k) in keys.enumerated() {
            let ok = key(k).withUnsafeBytes { kb in key(k).withUnsafeBytes { p.insertLeafCell(at: i, key: kb, value: $0, overflowLength: nil) } }
            precondition(ok)
        }
        return p
    }

    /// A one-level branch over `leaves` (in memory, so no file is read); separators are the
    /// leaves' first keys as the caller claims them.
    static func branch(_ leaves: [Page], separators: [Int]) -> Page {
        let b = Page(pageSize: 4096, kind: Format.pageKindBranch, level: 1, owner: 0)
        for (i, l) in leaves.enumerated() {
            let k: [UInt8] = i == 0 ? [] : key(separators[i])
            let ok = k.withUnsafeBytes { b.insertBranchCell(at: i, key: $0, childAddress: 0, child: l) }
            precondition(ok)
        }
        return b
    }

    static func cursor(over root: Page) -> Cursor {
        let fs = SimulatedFileSystem()
        let file = try! fs.open("/x", mode: .create)
        let pageFile = PageFile(file: file, path: "/x", pageSize: 4096, cacheBudget: 1 << 20)
        return Cursor(root: root, file: pageFile, lifetime: HandleLifetime(), owner: pageFile)
    }

    /// Walks forwards from `first()` (or backwards from `last()`); returns the keys seen and the
    /// error that stopped the walk.
    static func walk(_ c: Cursor, forwards: Bool) -> ([Int], StrataError?) {
        var seen: [Int] = []
        do {
            var ok = forwards ? try c.first() : try c.last()
            while ok {
                seen.append(Int(String(decoding: c.key, as: UTF8.self))!)
                if seen.count > 1_000 { break }
                ok = forwards ? try c.next() : try c.previous()
            }
        } catch let e as StrataError {
            return (seen, e)
        } catch {
            Issue.record("\(error)")
        }
        return (seen, nil)
    }

    static func isCorrupt(_ e: StrataError?) -> Bool {
        if case .corrupt = e { return true }
        return false
    }

    /// Leaves whose keys overlap (the second starts below the end of the first), and a leaf
    /// reachable twice (a loop in a damaged file): both directions throw `corrupt` at the
    /// boundary, after the keys that were in order.
    @Test func walkRefusesToGoBackwards() {
        let overlapping = CursorWalkTests.branch([CursorWalkTests.leaf([1, 2, 3, 4, 5]), CursorWalkTests.leaf([4, 6, 7])], separators: [0, 6])
        var (seen, error) = CursorWalkTests.walk(CursorWalkTests.cursor(over: overlapping), forwards: true)
        #expect(seen == [1, 2, 3, 4, 5] && CursorWalkTests.isCorrupt(error), "forwards: \(seen), \(String(describing: error))")
        (seen, error) = CursorWalkTests.walk(CursorWalkTests.cursor(over: overlapping), forwards: false)
        #expect(seen == [7, 6, 4] && CursorWalkTests.isCorrupt(error), "backwards: \(seen), \(String(describing: error))")

        let same = CursorWalkTests.leaf([1, 2, 3])
        let repeated = CursorWalkTests.branch([same, CursorWalkTests.leaf([4, 5]), same], separators: [0, 4, 6])
        (seen, error) = CursorWalkTests.walk(CursorWalkTests.cursor(over: repeated), forwards: true)
        #expect(seen == [1, 2, 3, 4, 5] && CursorWalkTests.isCorrupt(error), "repeated leaf, forwards: \(seen)")
        (seen, error) = CursorWalkTests.walk(CursorWalkTests.cursor(over: repeated), forwards: false)
        #expect(seen == [3, 2, 1] && CursorWalkTests.isCorrupt(error), "repeated leaf, backwards: \(seen)")

        // seek lands past the end of a leaf and moves on: the same check.
        let c = CursorWalkTests.cursor(over: overlapping)
        #expect(throws: StrataError.self) { try c.seek(key(5) + [0]) }
        #expect(!c.isValid && c.key.isEmpty)
    }

    /// An empty leaf inside a tree (left by deletes under a branch of one child) is walked past
    /// in both directions and by `first()`, `last()` and `seek`; it used to end the walk early.
    @Test func walkSkipsEmptyLeaves() throws {
        let tree = CursorWalkTests.branch([CursorWalkTests.leaf([]), CursorWalkTests.leaf([1, 2]), CursorWalkTests.leaf([]),
                                           CursorWalkTests.leaf([]), CursorWalkTests.leaf([5, 6]), CursorWalkTests.leaf([])],
                                          separators: [0, 1, 3, 4, 5, 7])
        var (seen, error) = CursorWalkTests.walk(CursorWalkTests.cursor(over: tree), forwards: true)
        #expect(seen == [1, 2, 5, 6] && error == nil, "forwards: \(seen)")
        (seen, error) = CursorWalkTests.walk(CursorWalkTests.cursor(over: tree), forwards: false)
        #expect(seen == [6, 5, 2, 1] && error == nil, "backwards: \(seen)")
        let c = CursorWalkTests.cursor(over: tree)
        #expect(try c.seek(key(3)))
        #expect(c.copyKey() == key(5))
        #expect(try c.seekBackward(key(4)))
        #expect(c.copyKey() == key(2))
    }

    /// A failed overflow read is thrown by the move that lands on the entry; it used to leave
    /// `value` empty (and `copyValue()` was the only way to see the error).
    @Test func overflowReadFailureIsThrown() throws {
        let fs = SimulatedFileSystem()
        let big = [UInt8](repeating: 0xAB, count: 20_000)
        do {
            let store = try Store(path: relPath, options: relOptions(fs))
            try store.write { tx in
                let t = try tx.createTree("t")
                try t.put(key(1), bytes("small"))
                try t.put(key(2), big)
                try t.put(key(3), bytes("small"))
            }
            try store.close()
        }
        let store = try Store(path: relPath, options: relOptions(fs))
        try store.read { tx in
            let c = try #require(try tx.tree("t")).makeCursor()
            #expect(try c.first())
            fs.failAlways(.read)
            #expect(throws: StrataError.self) { try c.next() }
            #expect(!c.isValid && c.value.isEmpty)
            fs.clearFaults()
            #expect(try c.seek(key(2)))
            #expect(c.isOverflow && Array(c.value) == big)
            #expect(try c.copyValue() == big)
            #expect(try c.next())
            #expect(Array(c.value) == bytes("small"))
            #expect(try c.previous())
            #expect(Array(c.value) == big)
        }
        try store.close()
    }

    /// `seekBackward` compares with the key inside its closure (it used to let a pointer to the
    /// key's bytes escape `withUnsafeBytes`).
    @Test func seekBackwardOnRealTree() throws {
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: relOptions(fs))
        try store.write { tx in
            let t = try tx.createTree("t")
            for i in stride(from: 0, to: 3_000, by: 3) { try t.put(key(i), key(i)) }
            let c = t.makeCursor()
            for probe in [0, 1, 2, 3, 1_500, 1_501, 2_997, 2_999, 5_000] {
                #expect(try c.seekBackward(key(probe)))
                #expect(c.copyKey() == key(probe / 3 * 3 > 2_997 ? 2_997 : probe / 3 * 3), "\(probe)")
            }
        }
        try store.close()
    }

    /// A failed writable open of something that is not a store leaves no lock file behind
    /// (a lock file that was there before stays).
    @Test func failedOpenLeavesNoLockFile() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let text = dir.file("notes.txt")
        #expect(system("printf 'hello, this is not a store at all, but it is long enough to be read' > '\(text)'") == 0)
        #expect(throws: StrataError.self) { _ = try Store(path: text) }
        #expect(access(Store.lockPath(for: text), F_OK) != 0, "a lock file was left beside a file that is not a store")
        var o = StoreOptions()
        o.createIfMissing = false
        let missing = dir.file("missing.strata")
        #expect(throws: StrataError.self) { _ = try Store(path: missing, options: o) }
        #expect(access(Store.lockPath(for: missing), F_OK) != 0, "a lock file was left for a store that does not exist")
        // A lock file that existed before is not removed.
        #expect(system("touch '\(Store.lockPath(for: text))'") == 0)
        #expect(throws: StrataError.self) { _ = try Store(path: text) }
        #expect(access(Store.lockPath(for: text), F_OK) == 0)
    }
}
