import Testing
@testable import StrataStorage

/// An operation of a write transaction either throws before it changes anything, or fails the
/// transaction so that its commit is refused (LMDB's `MDB_TXN_ERROR`).
///
/// Every I/O call a transaction makes (page reads while it descends, merges and drops; overflow
/// and commit frame writes; preallocation; the commit's sync) is made to fail in turn, and so is
/// every page it reads (a damaged page, caught by its checksum). The transaction's body catches
/// every error and carries on, as a careless caller would, then returns, so the commit is
/// attempted. What the store shows — in memory at once, and after a reopen — must be exactly
/// what was acknowledged: the model of the successful operations if the commit returned, the
/// state before it otherwise.
@Suite struct TransactionFailureTests {
    /// A store, reopened so its pages come from the file with a cold cache: tree "a" (6,000
    /// keys of 60 random bytes, five overflow values) and tree "d" (500 keys, dropped by the
    /// workload).
    struct Fixture {
        let fs: SimulatedFileSystem
        let content: RelTrees
    }

    static let fixture: Fixture = {
        let fs = SimulatedFileSystem()
        var rng = SeededRandom(seed: 2026)
        var content: RelTrees = ["a": [:], "d": [:]]
        for i in 0..<6_000 { content["a"]![key(i)] = relRandomBytes(60, &rng) }
        for i in 0..<5 { content["a"]![bytes("big\(i)")] = relRandomBytes(3_000 + 500 * i, &rng) }
        for i in 0..<500 { content["d"]![key(i)] = relRandomBytes(20, &rng) }
        do {
            let store = try Store(path: relPath, options: relOptions(fs))
            try store.write { tx in
                for (name, entries) in content {
                    let t = try tx.createTree(name)
                    for (k, v) in entries.sorted(by: { compareBytes($0.key, $1.key) < 0 }) { try t.put(k, v) }
                }
            }
            try store.close()
        } catch {
            Issue.record("fixture: \(error)")
        }
        return Fixture(fs: fs, content: content)
    }()

    /// One call of the workload: what it does to the transaction, and to the model if it succeeds.
    struct Op: Sendable {
        var name: String
        var run: @Sendable (WriteTransaction) throws -> Void
        var apply: @Sendable (inout RelTrees) -> Void
    }

    static let ops: [Op] = {
        var ops: [Op] = []
        var rng = SeededRandom(seed: 7)
        // Puts of new and existing keys all over the tree (descents read pages).
        for _ in 0..<15 {
            let k = key(Int(rng.next() % 7_000))
            let v = relRandomBytes(60, &rng)
            ops.append(Op(name: "put", run: { try $0.tree("a")!.put(k, v) }, apply: { $0["a"]![k] = v }))
        }
        // Overflow values: a new one, a replaced one (frames written, pages read).
        for (name, length) in [("big-new", 5_000), ("big1", 4_200)] {
            let v = relRandomBytes(length, &rng)
            ops.append(Op(name: "put overflow", run: { try $0.tree("a")!.put(bytes(name), v) }, apply: { $0["a"]![bytes(name)] = v }))
        }
        // A run of deletes that empties leaves, so pages merge (reading their neighbours).
        for i in 2_000..<2_400 {
            ops.append(Op(name: "delete", run: { try $0.tree("a")!.delete(key(i)) }, apply: { $0["a"]![key(i)] = nil }))
        }
        ops.append(Op(name: "delete overflow", run: { try $0.tree("a")!.delete(bytes("big2")) }, apply: { $0["a"]![bytes("big2")] = nil }))
        ops.append(Op(name: "drop", run: { try $0.dropTree("d") }, apply: { $0["d"] = nil }))
        ops.append(Op(name: "create", run: { try $0.createTree("n").put(key(1), key(1)) }, apply: { $0["n"] = [key(1): key(1)] }))
        // Reads inside the transaction must agree with the model when they succeed.
        ops.append(Op(name: "get", run: { tx in
            _ = try tx.tree("a")!.get(key(5_000))
        }, apply: { _ in }))
        // Downwards, so each merge reads a left neighbour no operation has read yet.
        for i in stride(from: 4_300, to: 4_000, by: -1) {
            ops.append(Op(name: "delete", run: { try $0.tree("a")!.delete(key(i)) }, apply: { $0["a"]![key(i)] = nil }))
        }
        return ops
    }()

    enum Outcome { case committed, refused, failedCommit, poisoned }

    /// Runs the workload on a copy of the fixture with `setUp` arming a fault, and checks the
    /// store in memory and after a reopen. Returns what happened.
    @discardableResult
    /// `damage` changes the file before the store opens and `repair` undoes it after it closed
    /// (a page that reads wrong once, as a flaky disk or cable does).
    static func run(label: String, damage: ((SimulatedFileSystem) -> Void)? = nil, repair: ((SimulatedFileSystem) -> Void)? = nil,
                    setUp: (SimulatedFileSystem) -> Void = { _ in }) -> Outcome? {
        let fx = fixture
        let fs = fx.fs.clone()
        var model = fx.content
        var failed: StrataError?
        var plainErrors = 0
        damage?(fs)
        let store: Store
        do { store = try Store(path: relPath, options: relOptions(fs)) } catch {
            // A damaged root is found by recovery, before any transaction.
            if damage != nil, case StrataError.corrupt = error { return nil }
            Issue.record("\(label): open: \(error)")
            return nil
        }
        setUp(fs)
        var outcome: Outcome
        do {
            try store.write { tx in
                for op in ops {
                    do {
                        try op.run(tx)
                        if let failed { Issue.record("\(label): \(op.name) succeeded in a failed transaction (\(failed))") }
                        op.apply(&model)
                    } catch StrataError.transactionFailed(let cause) {
                        if failed == nil { failed = cause }
                    } catch {
                        if failed != nil { Issue.record("\(label): \(op.name) in a failed transaction threw \(error)") }
                        plainErrors += 1
                    }
                }
                // A careless caller: every error swallowed, the closure returns.
            }
            outcome = .committed
        } catch StrataError.transactionFailed {
            outcome = .refused
        } catch StrataError.poisoned {
            outcome = .poisoned
        } catch {
            outcome = .failedCommit
        }
        fs.clearFaults()
        if failed != nil && outcome != .refused {
            Issue.record("\(label): the transaction failed (\(failed!)) but its commit was not refused (\(outcome))")
        }
        if outcome == .refused && failed == nil {
            Issue.record("\(label): the commit was refused though no operation failed the transaction")
        }
        // What a caller was told is in the store.
        let acknowledged = outcome == .committed ? model : fx.content
        let allowed = outcome == .poisoned ? [fx.content, model] : [acknowledged]
        do {
            let memory = try relReadAll(store)
            if !allowed.contains(memory) {
                Issue.record("\(label) (\(outcome)): in memory: \(relDiff(acknowledged, memory))")
            }
        } catch StrataError.corrupt where damage != nil {
            // The damaged page is still damaged for this handle.
        } catch {
            Issue.record("\(label): reading after the run: \(error)")
        }
        try? store.close()
        repair?(fs)
        do {
            let reopened = try Store(path: relPath, options: relOptions(fs))
            let content = try relReadAll(reopened)
            if !allowed.contains(content) {
                Issue.record("\(label) (\(outcome)): after reopen: \(relDiff(acknowledged, content))")
            }
            let report = try reopened.check()
            #expect(report.isClean, "\(label): \(report.problems)")
            try reopened.close()
        } catch {
            Issue.record("\(label): reopening: \(error)")
        }
        return outcome
    }

    /// How many calls of `kind` the workload's transaction makes, in a clean run.
    static func calls(of kind: SimulatedFileSystem.Operation) -> (before: Int, during: Int) {
        let fs = fixture.fs.clone()
        guard let store = try? Store(path: relPath, options: relOptions(fs)) else { return (0, 0) }
        let before = fs.count(of: kind)
        _ = try? store.write { tx in for op in ops { try op.run(tx) } }
        let during = fs.count(of: kind) - before
        try? store.close()
        return (before, during)
    }

    static func sweep(_ kind: SimulatedFileSystem.Operation, _ faults: [SimulatedFileSystem.Fault]) {
        let (before, during) = calls(of: kind)
        #expect(during > 0, "the workload makes no \(kind) call")
        var tally: [String: Int] = [:]
        for fault in faults {
            for i in 1...max(during, 1) {
                let outcome = run(label: "\(kind) call \(i) of \(during) fails with \(fault)") {
                    $0.failAt(kind, callIndex: before + i, fault: fault)
                }
                tally["\(outcome.map { "\($0)" } ?? "error")", default: 0] += 1
            }
        }
        print("TransactionFailureTests \(kind) × \(faults): \(during) calls, outcomes \(tally.sorted { $0.key < $1.key })")
    }

    @Test func readFaults() { TransactionFailureTests.sweep(.read, [.ioError]) }
    @Test func writeFaults() { TransactionFailureTests.sweep(.write, [.ioError, .diskFull, .shortWrite(bytes: nil)]) }
    @Test func syncAndTruncateFaults() {
        TransactionFailureTests.sweep(.sync, [.ioError])
        TransactionFailureTests.sweep(.truncate, [.ioError, .diskFull])
    }

    /// Every page frame of the fixture damaged in turn (one payload byte flipped, so its
    /// checksum fails when the transaction reads it), then restored before the reopen.
    @Test func damagedPages() throws {
        let image = try #require(TransactionFailureTests.fixture.fs.contents(of: relPath))
        var pages: [(offset: Int, length: Int)] = []
        var at = Int(Format.logStart)
        while at + Format.frameHeaderLength <= image.count {
            let header = image.withUnsafeBytes {
                FrameHeader.decode(UnsafeRawBufferPointer(rebasing: $0[at..<at + Format.frameHeaderLength]), at: UInt64(at))
            }
            guard let h = header else { break }
            if h.type == FrameType.page { pages.append((at, Int(h.frameLength))) }
            at += Int(h.frameLength)
        }
        #expect(pages.count > 50, "the fixture has \(pages.count) page frames")
        var tally: [String: Int] = [:]
        for (n, page) in pages.enumerated() {
            let flip = page.offset + Format.frameHeaderLength + (n * 37) % (page.length - Format.frameHeaderLength)
            let flipByte: (SimulatedFileSystem) -> Void = { fs in
                guard var bytes = fs.contents(of: relPath) else { return }
                bytes[flip] ^= 0x40
                fs.setContents(bytes, of: relPath)
            }
            let outcome = TransactionFailureTests.run(label: "page frame at \(page.offset) damaged", damage: flipByte, repair: flipByte)
            tally["\(outcome.map { "\($0)" } ?? "error")", default: 0] += 1
        }
        print("TransactionFailureTests damaged pages: \(pages.count) frames, outcomes \(tally.sorted { $0.key < $1.key })")
    }
}
