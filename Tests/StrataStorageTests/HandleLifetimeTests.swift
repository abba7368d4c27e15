import Foundation
import Testing
@testable import StrataStorage

/// Every public member of every handle (write and read transactions, their trees, cursors, the
/// store) used after its transaction ended — committed, rolled back, after its closure threw,
/// failed — must throw a typed error (or, for the few non-throwing accessors, return nothing),
/// never read or change data. The tables below name every public member; `tablesCoverThePublicAPI`
/// scans the sources, so a member added later without a case here fails the suite.
@Suite struct HandleLifetimeTests {
    typealias Use = (name: String, body: () throws -> Void)

    // MARK: The tables

    /// Every throwing member of a write transaction.
    static func uses(of tx: WriteTransaction) -> [Use] {
        [
            ("WriteTransaction.treeNames", { _ = try tx.treeNames }),
            ("WriteTransaction.tree", { _ = try tx.tree("t") }),
            ("WriteTransaction.createTree", { _ = try tx.createTree("new") }),
            ("WriteTransaction.treeCreatingIfMissing", { _ = try tx.treeCreatingIfMissing("t") }),
            ("WriteTransaction.dropTree", { try tx.dropTree("t") }),
            ("WriteTransaction.rollback", { try tx.rollback() }),
        ]
    }

    /// Every throwing member of a write tree (`makeCursor` through the cursor it returns).
    static func uses(of t: WriteTree) -> [Use] {
        [
            ("WriteTree.count", { _ = try t.count }),
            ("WriteTree.put", { try t.put(key(1), bytes("late")) }),
            ("WriteTree.put", { try bytes("k").withUnsafeBytes { k in try bytes("v").withUnsafeBytes { try t.put(k, $0) } } }),
            ("WriteTree.put", { try t.put(bytes("k").span.bytes, bytes("v").span.bytes) }),
            ("WriteTree.replaceValue", { try bytes("v").withUnsafeBytes { try t.replaceValue(at: t.makeCursor(), with: $0) } }),
            ("WriteTree.delete", { try t.delete(key(2)) }),
            ("WriteTree.delete", { _ = try key(2).withUnsafeBytes { try t.delete($0) } }),
            ("WriteTree.delete", { _ = try t.delete(key(2).span.bytes) }),
            ("WriteTree.get", { _ = try t.get(key(3)) }),
            ("WriteTree.withValue", { _ = try t.withValue(forKey: key(3)) { $0.byteCount } }),
            ("WriteTree.withValue", { _ = try t.withValue(forKey: key(3).span.bytes) { $0.byteCount } }),
            ("WriteTree.withValueBytes", { _ = try key(3).withUnsafeBytes { k in try t.withValueBytes(forKey: k) { $0.count } } }),
            ("WriteTree.contains", { _ = try t.contains(key(3)) }),
            ("WriteTree.makeCursor", { try t.makeCursor().first() }),
            ("WriteTree.entries", { _ = try t.entries() }),
        ]
    }

    /// Every throwing member of a snapshot.
    static func uses(of tx: ReadTransaction) -> [Use] {
        [
            ("ReadTransaction.treeNames", { _ = try tx.treeNames }),
            ("ReadTransaction.tree", { _ = try tx.tree("t") }),
        ]
    }

    /// Every throwing member of a snapshot's tree.
    static func uses(of t: ReadTree) -> [Use] {
        [
            ("ReadTree.count", { _ = try t.count }),
            ("ReadTree.get", { _ = try t.get(key(3)) }),
            ("ReadTree.withValue", { _ = try t.withValue(forKey: key(3)) { $0.byteCount } }),
            ("ReadTree.withValue", { _ = try t.withValue(forKey: key(3).span.bytes) { $0.byteCount } }),
            ("ReadTree.withValueBytes", { _ = try key(3).withUnsafeBytes { k in try t.withValueBytes(forKey: k) { $0.count } } }),
            ("ReadTree.contains", { _ = try t.contains(key(3)) }),
            ("ReadTree.makeCursor", { try t.makeCursor().first() }),
            ("ReadTree.entries", { _ = try t.entries() }),
        ]
    }

    /// Every throwing member of a cursor (one positioned on an entry before the end).
    static func uses(of c: Cursor) -> [Use] {
        [
            ("Cursor.copyValue", { _ = try c.copyValue() }),
            ("Cursor.first", { try c.first() }),
            ("Cursor.last", { try c.last() }),
            ("Cursor.seek", { try c.seek(key(5)) }),
            ("Cursor.seek", { _ = try key(5).withUnsafeBytes { try c.seek($0) } }),
            ("Cursor.seek", { _ = try c.seek(key(5).span.bytes) }),
            ("Cursor.seekBackward", { try c.seekBackward(key(5)) }),
            ("Cursor.next", { try c.next() }),
            ("Cursor.previous", { try c.previous() }),
            ("Cursor.restOfLeaf", { _ = try c.restOfLeaf() }),
            ("Cursor.leafEntries", { _ = try key(5).withUnsafeBytes { try c.leafEntries(from: $0) } }),
        ]
    }

    /// The non-throwing members of a cursor: after the end they show no entry.
    static func checkCursorShowsNothing(_ c: Cursor, _ label: String) {
        #expect(!c.isValid, "\(label): Cursor.isValid")
        #expect(c.key.isEmpty, "\(label): Cursor.key")
        #expect(c.value.isEmpty, "\(label): Cursor.value")
        #expect(!c.isOverflow, "\(label): Cursor.isOverflow")
        #expect(c.copyKey().isEmpty, "\(label): Cursor.copyKey")
    }

    /// Members that stay readable after the end (identity and state, no data), and members
    /// checked separately (the store's, and the non-throwing cursor accessors above).
    static let exempt: Set<String> = [
        "WriteTransaction.transactionID", "WriteTree.name", "ReadTransaction.transactionID", "ReadTransaction.close",
        "ReadTree.name", "Cursor.isValid", "Cursor.key", "Cursor.value", "Cursor.isOverflow", "Cursor.copyKey",
        // Store: identity, the static lock-file helpers, and counters that stay readable after close.
        "Store.path", "Store.options", "Store.isReadOnly", "Store.lockPath", "Store.init", "Store.statistics",
        "Store.lastCommittedTransactionID",
        "Store.read(storePath:fileSystem:)", "Store.close",
        "Store.addOtherProcessCommitObserver", "Store.removeOtherProcessCommitObserver",
    ]

    /// Every throwing member of a closed store.
    static func uses(of store: Store) -> [Use] {
        [
            ("Store.snapshot", { _ = try store.snapshot() }),
            ("Store.read", { try store.read { _ in } }),
            ("Store.write", { try store.write { _ in } }),
            ("Store.checkpoint", { try store.checkpoint() }),
            ("Store.compact", { try store.compact() }),
            ("Store.backup", { try store.backup(to: relPath + ".backup") }),
            ("Store.check", { _ = try store.check() }),
            ("Store.info", { _ = try store.info() }),
            ("Store.refresh", { _ = try store.refresh() }),
        ]
    }

    static func expectAll(_ uses: [Use], throw expected: StrataError, _ label: String) {
        for use in uses {
            do {
                try use.body()
                Issue.record("\(label): \(use.name) did not throw")
            } catch let error as StrataError {
                #expect(error == expected, "\(label): \(use.name) threw \(error), expected \(expected)")
            } catch {
                Issue.record("\(label): \(use.name) threw \(error)")
            }
        }
    }

    // MARK: Fixtures

    static let uCount = 8_000

    /// A store, reopened so its pages come from the file: tree "t" (keys 0..<400, an overflow
    /// value under key 5) and tree "u" (`uCount` keys of 100 random bytes, so its last leaves lie
    /// beyond the read-ahead of a walk over "t").
    static func makeStore(_ fs: SimulatedFileSystem) throws -> Store { try makeStoreAndContent(fs).0 }

    /// `makeStore` and the content it wrote (known without reading the store, whose cache
    /// stays cold).
    static func makeStoreAndContent(_ fs: SimulatedFileSystem) throws -> (Store, RelTrees) {
        let store = try Store(path: relPath, options: relOptions(fs))
        var rng = SeededRandom(seed: 11)
        var content: RelTrees = ["t": [:], "u": [:]]
        try store.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<400 { content["t"]![key(i)] = bytes("value \(i)") }
            content["t"]![key(5)] = [UInt8](repeating: 9, count: 3_000)
            let u = try tx.createTree("u")
            for i in 0..<uCount { content["u"]![key(i)] = relRandomBytes(100, &rng) }
            // In key order: a dictionary's order changes from process to process, and with it
            // the trees' shape (how many keys the last leaf of "u" holds).
            for (name, tree) in [("t", t), ("u", u)] {
                for (k, v) in content[name]!.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) { try tree.put(k, v) }
            }
        }
        try store.close()
        return (try Store(path: relPath, options: relOptions(fs)), content)
    }

    /// The handles a write closure leaves behind, each used once inside so cursors are positioned.
    struct Kept {
        var tx: WriteTransaction?
        var tree: WriteTree?
        var cursor: Cursor?
    }

    enum Ending: CaseIterable { case commit, rollback, closureThrows, failedAndCaught, failedAndThrown }

    struct Thrown: Error {}

    /// Leaves handles behind after each way a write transaction can end.
    @Test func writeHandlesRefuseUseAfterTheEnd() throws {
        for ending in Ending.allCases {
            let fs = SimulatedFileSystem()
            let (store, before) = try HandleLifetimeTests.makeStoreAndContent(fs)
            let pinned = try store.snapshot()
            var kept = Kept()
            var failure: StrataError?
            do {
                try store.write { tx in
                    let t = try tx.tree("t")!
                    let c = t.makeCursor()
                    #expect(try c.seek(key(5)))
                    kept = Kept(tx: tx, tree: t, cursor: c)
                    try t.put(key(1000), bytes("inside"))
                    #expect(try c.first())
                    switch ending {
                    case .commit: break
                    case .rollback: try tx.rollback()
                    case .closureThrows: throw Thrown()
                    case .failedAndCaught, .failedAndThrown:
                        // Fail it for real: a merge reading a page that cannot be read.
                        try HandleLifetimeTests.failTransaction(tx, fs)
                        let failed = try #require(tx.lifetime.cause)
                        // Inside, every use reports the failure; only rollback is allowed.
                        HandleLifetimeTests.expectAll(HandleLifetimeTests.uses(of: tx).filter { $0.name != "WriteTransaction.rollback" },
                                                      throw: .transactionFailed(cause: failed), "\(ending), inside")
                        HandleLifetimeTests.expectAll(HandleLifetimeTests.uses(of: t), throw: .transactionFailed(cause: failed), "\(ending), inside")
                        HandleLifetimeTests.expectAll(HandleLifetimeTests.uses(of: c), throw: .transactionFailed(cause: failed), "\(ending), inside")
                        if ending == .failedAndThrown { throw StrataError.transactionFailed(cause: failed) }
                    }
                }
            } catch is Thrown {
            } catch let error as StrataError {
                failure = error
            }
            let label = "\(ending)"
            switch ending {
            case .failedAndCaught, .failedAndThrown:
                guard case .transactionFailed = failure else {
                    Issue.record("\(label): the commit of a failed transaction was not refused (\(String(describing: failure)))")
                    continue
                }
            default:
                #expect(failure == nil, "\(label): \(String(describing: failure))")
            }
            let end: TransactionEnd = ending == .commit ? .committed : .rolledBack
            let tx = try #require(kept.tx), t = try #require(kept.tree), c = try #require(kept.cursor)
            HandleLifetimeTests.expectAll(HandleLifetimeTests.uses(of: tx), throw: .transactionEnded(end), label)
            HandleLifetimeTests.expectAll(HandleLifetimeTests.uses(of: t), throw: .transactionEnded(end), label)
            HandleLifetimeTests.expectAll(HandleLifetimeTests.uses(of: c), throw: .transactionEnded(end), label)
            HandleLifetimeTests.checkCursorShowsNothing(c, label)
            // A cursor made from a kept tree after the end is refused too.
            HandleLifetimeTests.checkCursorShowsNothing(t.makeCursor(), label + ", new cursor")
            #expect(t.name == "t")

            // Nothing leaked into the store: the pinned snapshot, the current state, the file.
            #expect(try relReadAll(pinned) == before, "\(label): a snapshot taken before changed")
            var expected = before
            if ending == .commit { expected["t"]![key(1000)] = bytes("inside") }
            #expect(try relReadAll(store) == expected, "\(label)")
            let report = try store.check()
            #expect(report.isClean, "\(label): \(report.problems)")
            pinned.close()
            try store.compact()
            try store.backup(to: relPath + ".backup")
            try store.close()
            let reopened = try Store(path: relPath, options: relOptions(fs))
            #expect(try relReadAll(reopened) == expected, "\(label): after reopen")
            try reopened.close()
        }
    }

    /// Fails `tx` for real: deletes keys from the end of tree "u" (its last leaf is loaded
    /// first) with every file read failing, until a merge needs the left neighbour, which no
    /// one has read yet: that delete must fail the transaction. The second-to-last key is read
    /// too: when the last leaf holds one key, deleting it empties the leaf, which leaves its
    /// parent with no read, and the next delete starts in the leaf before.
    static func failTransaction(_ tx: WriteTransaction, _ fs: SimulatedFileSystem) throws {
        let u = try #require(try tx.tree("u"))
        _ = try u.get(key(uCount - 1))
        _ = try u.get(key(uCount - 2))
        fs.failAlways(.read)
        defer { fs.clearFaults() }
        for i in stride(from: uCount - 1, through: 0, by: -1) {
            do {
                try u.delete(key(i))
            } catch StrataError.transactionFailed {
                return
            } catch {
                Issue.record("delete \(i) failed before it changed anything (\(error)): the fixture does not reach a merge")
                return
            }
        }
        Issue.record("no delete needed a page read")
    }

    /// The regression this guards against: a tree kept past its closure accepted puts that a
    /// snapshot taken before then saw, and the file then failed `check` and `compact`.
    @Test func keptTreeCannotWriteIntoCommittedData() throws {
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: relOptions(fs))
        var kept: WriteTree?
        try store.write { tx in
            let t = try tx.createTree("t")
            try t.put(key(1), bytes("one"))
            kept = t
        }
        let snapshot = try store.snapshot()
        let t = try #require(kept)
        #expect(throws: StrataError.transactionEnded(.committed)) { try t.put(key(2), bytes("two")) }
        #expect(try snapshot.tree("t")?.get(key(2)) == nil)
        #expect(try snapshot.tree("t")?.count == 1)
        #expect(try store.check().isClean)
        try store.compact()
        try store.backup(to: relPath + ".backup")
        snapshot.close()
        try store.close()
    }

    /// Snapshots: after `close()`, after the end of `read`'s closure, and a snapshot's trees
    /// keeping it registered while they are in use.
    @Test func readHandlesRefuseUseAfterClose() throws {
        let fs = SimulatedFileSystem()
        let store = try HandleLifetimeTests.makeStore(fs)
        for explicit in [true, false] {
            let label = explicit ? "after close()" : "after read's closure"
            var kept: (ReadTransaction, ReadTree, Cursor)?
            if explicit {
                let tx = try store.snapshot()
                let t = try #require(try tx.tree("t"))
                let c = t.makeCursor()
                #expect(try c.seek(key(5)))
                #expect(c.isOverflow && c.value.count == 3_000)
                kept = (tx, t, c)
                tx.close()
                tx.close() // twice is fine
            } else {
                try store.read { tx in
                    let t = try #require(try tx.tree("t"))
                    let c = t.makeCursor()
                    #expect(try c.seek(key(5)))
                    kept = (tx, t, c)
                }
            }
            let (tx, t, c) = try #require(kept)
            HandleLifetimeTests.expectAll(HandleLifetimeTests.uses(of: tx), throw: .transactionEnded(.closed), label)
            HandleLifetimeTests.expectAll(HandleLifetimeTests.uses(of: t), throw: .transactionEnded(.closed), label)
            HandleLifetimeTests.expectAll(HandleLifetimeTests.uses(of: c), throw: .transactionEnded(.closed), label)
            HandleLifetimeTests.checkCursorShowsNothing(c, label)
            #expect(t.name == "t" && tx.transactionID == 1)
            #expect(try store.info().openSnapshots == 0, "\(label): the ended snapshot is still registered")
        }
        // A tree of a snapshot that the caller dropped keeps it open (and registered).
        let tree = try #require(try store.snapshot().tree("t"))
        #expect(try tree.get(key(3)) == bytes("value 3"))
        #expect(try store.info().openSnapshots == 1)
        try store.close()
    }

    /// Every member of a closed store throws `closed`; `close()` again does nothing.
    @Test func closedStoreRefusesEverything() async throws {
        for readOnly in [false, true] {
            let fs = SimulatedFileSystem()
            try HandleLifetimeTests.makeStore(fs).close()
            var o = relOptions(fs)
            o.readOnly = readOnly
            let store = try Store(path: relPath, options: o)
            try store.close()
            try store.close()
            for use in HandleLifetimeTests.uses(of: store) {
                do {
                    try use.body()
                    Issue.record("read-only \(readOnly): \(use.name) did not throw")
                } catch let error as StrataError {
                    switch error {
                    case .closed: break
                    case .readOnly where readOnly && ["Store.write", "Store.checkpoint", "Store.compact"].contains(use.name): break
                    default: Issue.record("read-only \(readOnly): \(use.name) threw \(error)")
                    }
                }
            }
            await #expect(throws: StrataError.self) { try await store.write { _ in } }
            await #expect(throws: StrataError.self) { _ = try await store.waitForCommit(after: 0) }
        }
    }

    /// A cursor of a write transaction whose tree changed under it refuses to move (its pages
    /// may have been changed in place) until it is positioned again, and never shows stale bytes.
    @Test func writeCursorInvalidatedByChanges() throws {
        let fs = SimulatedFileSystem()
        let store = try HandleLifetimeTests.makeStore(fs)
        try store.write { tx in
            let t = try tx.tree("t")!
            let other = try tx.createTree("other")
            let c = t.makeCursor()
            for change in 0..<3 {
                #expect(try c.seek(key(395)))
                #expect(c.copyKey() == key(395))
                switch change {
                case 0: for i in 0..<300 { try t.put(key(100 + i), [UInt8](repeating: 1, count: 200)) } // splits
                case 1: for i in 0..<390 { try t.delete(key(i)) } // merges
                default: try tx.dropTree("t")
                }
                #expect(!c.isValid && c.key.isEmpty && c.value.isEmpty)
                #expect(throws: StrataError.cursorInvalidated) { try c.next() }
                #expect(throws: StrataError.cursorInvalidated) { try c.previous() }
                #expect(throws: StrataError.cursorInvalidated) { try c.copyValue() }
                if change < 2 {
                    #expect(try c.first())
                    #expect(c.isValid)
                }
            }
            // A change to another tree does not invalidate it.
            let d = try tx.tree("other")!.makeCursor()
            try other.put(key(1), key(1))
            #expect(try d.first())
            try tx.createTree("x").put(key(2), key(2))
            #expect(d.isValid && d.copyKey() == key(1))
            #expect(try !d.next())
        }
        try store.close()
    }

    // MARK: The tables cover the public API

    /// Scans the sources of StrataStorage for the public and package members of the handle types
    /// and checks that every one is in a table above (or exempt, with a reason).
    @Test func tablesCoverThePublicAPI() throws {
        let fs = SimulatedFileSystem()
        let store = try HandleLifetimeTests.makeStore(fs)
        var covered: [String: Int] = [:]
        func count(_ uses: [Use]) { for u in uses { covered[u.name, default: 0] += 1 } }
        try store.write { tx in
            let t = try tx.tree("t")!
            count(HandleLifetimeTests.uses(of: tx))
            count(HandleLifetimeTests.uses(of: t))
            count(HandleLifetimeTests.uses(of: t.makeCursor()))
            try tx.rollback()
        }
        try store.read { tx in
            let t = try tx.tree("t")!
            count(HandleLifetimeTests.uses(of: tx))
            count(HandleLifetimeTests.uses(of: t))
        }
        count(HandleLifetimeTests.uses(of: store))
        try store.close()
        // `write` has an async overload, tested in closedStoreRefusesEverything, as is the async
        // `waitForCommit`.
        covered["Store.write", default: 0] += 1
        covered["Store.waitForCommit", default: 0] += 1

        let declared = try HandleLifetimeTests.publicMembers(of: ["WriteTransaction", "WriteTree", "ReadTransaction", "ReadTree", "Cursor", "Store"])
        #expect(declared.count > 30, "the scan found only \(declared)")
        for (member, n) in declared where !HandleLifetimeTests.exempt.contains(member) {
            #expect(covered[member, default: 0] >= n, "\(member): \(n) public declaration(s), \(covered[member, default: 0]) in the tables: add the new member to HandleLifetimeTests")
        }
        for (member, _) in covered where declared[member] == nil {
            Issue.record("\(member) is in a table but not declared public (renamed?)")
        }
    }

    /// `Type.member` → number of public declarations, from the `.swift` files of StrataStorage:
    /// members at the top level of the type's body or of an `extension Type`.
    static func publicMembers(of types: Set<String>) throws -> [String: Int] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/StrataStorage")
        var result: [String: Int] = [:]
        guard let files = FileManager.default.enumerator(atPath: root.path) else { return result }
        let header = try Regex(#"^(?:public |final |@\w+ )*(?:class|struct|enum|extension|actor) (\w+)"#)
        let member = try Regex(#"^\s*(?:@[\w()]+\s+)*(?:public|package) (?:static |final |nonisolated )*(func|var|let|init|subscript)\s*(\w*)"#)
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            var depth = 0
            var current: String?
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
                if depth == 0, let m = try header.firstMatch(in: code), let name = m.output[1].substring {
                    current = types.contains(String(name)) ? String(name) : nil
                } else if depth == 1, let type = current, let m = try member.firstMatch(in: code) {
                    let kind = m.output[1].substring.map(String.init) ?? ""
                    var name = m.output[2].substring.map(String.init) ?? ""
                    if kind == "init" { name = "init" }
                    // Overloads of `read` on Store differ in kind: the static one reads a status record.
                    if type == "Store", name == "read", code.contains("static") { name = "read(storePath:fileSystem:)" }
                    result["\(type).\(name)", default: 0] += 1
                }
                for ch in code {
                    if ch == "{" { depth += 1 } else if ch == "}" { depth -= 1 }
                }
            }
        }
        return result
    }
}
