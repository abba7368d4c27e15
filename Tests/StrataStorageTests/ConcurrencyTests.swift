import Testing
import Foundation
import Dispatch
import Synchronization
@testable import StrataStorage

/// Concurrency stress: snapshots against a writer, checkpoints and compactions; group commit;
/// the writer gate. Threads report problems into a `Problems` list (Swift Testing's `#expect`
/// needs the test's task context); each test checks the list once everything has joined.
///
/// `STRATA_STRESS_SECONDS` sets how long the snapshot stress runs (default 10: the reliability brief asks for a run of at least ten seconds in the suite).
@Suite(.serialized) struct ConcurrencyTests {

    // MARK: 1. Snapshots under a writer, checkpoints and compactions

    /// Invariants every commit preserves (and every snapshot must see):
    /// - tree "accounts": int64 balances summing to 0, an even number of accounts, all ids < meta.next;
    /// - tree "meta": `seq` (+1 per commit, so `transactionID - seq` is constant), `count`
    ///   (= accounts.count, a cross-tree check), `next` (the next unused account id);
    /// - tree "blobs": overflow-sized values, each self-describing (its seq, length, pattern),
    ///   written by commit `seq` ≤ the snapshot's seq.
    /// A snapshot re-read after later commits, checkpoints and compactions must give exactly
    /// the same digest.
    @Test func snapshotsStayConsistentUnderWriterAndCompaction() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let seconds = stressSeconds()
        let seed = UInt64(UInt32.random(in: 1...UInt32.max))
        print("[stress] seed \(seed), \(seconds) s")
        var options = testOptions(.normal)
        options.checkpointLogBytes = 128 << 10
        options.checkpointStepPages = 4  // readers race checkpoints spread over commits
        options.syncIntervalMilliseconds = 5
        let path = dir.file("stress.strata")
        let store = try Store(path: path, options: options)

        // Initial state: 200 accounts summing to 0.
        var setupRng = SeededRandom(seed: seed)
        try await store.write { tx in
            let accounts = try tx.createTree("accounts")
            let meta = try tx.createTree("meta")
            try tx.createTree("blobs")
            var sum: Int64 = 0
            for i in 0..<199 {
                let v = Int64.random(in: -1_000_000...1_000_000, using: &setupRng)
                sum += v
                try accounts.put(key(i), enc(v))
            }
            try accounts.put(key(199), enc(-sum))
            try meta.put(Meta.seq, enc(0))
            try meta.put(Meta.count, enc(200))
            try meta.put(Meta.next, enc(200))
        }
        let t0 = try store.read { $0.transactionID }

        let s = StressState()
        let problems = Problems()
        let dirPath = dir.path
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let group = DispatchGroup()

        // The blocking writer thread: transfers, pair inserts/deletes, blobs, rollbacks,
        // explicit checkpoints and compactions.
        spawnThread(group, "writer") {
            var rng = SeededRandom(seed: seed &+ 1)
            var lastCheckpoint = ContinuousClock.now
            var lastCompaction = ContinuousClock.now
            while ContinuousClock.now < deadline && !problems.stop {
                let roll = Int.random(in: 0..<100, using: &rng)
                do {
                    if roll < 3 {
                        // Break the invariant, then roll back: nobody may see it.
                        try store.write { tx in
                            try s.exclusive(problems) {
                                let a = try tx.tree("accounts")!
                                let meta = try tx.tree("meta")!
                                _ = try Ledger.bumpSeq(meta)
                                if let k = try Ledger.pick(a, &rng) {
                                    try a.put(k, enc(try Ledger.balance(a, k) + 12_345))
                                }
                                try a.put(key(9_999_999), enc(1))
                                try tx.rollback()
                            }
                        }
                        s.rollbacks.add(1, ordering: .relaxed)
                    } else if roll < 5 {
                        // Same, abandoned by throwing.
                        do {
                            try store.write { tx in
                                try s.exclusive(problems) {
                                    let a = try tx.tree("accounts")!
                                    _ = try Ledger.bumpSeq(try tx.tree("meta")!)
                                    if let k = try Ledger.pick(a, &rng) { try a.delete(k) }
                                    throw Abandon()
                                }
                            }
                            problems.add("a write whose closure threw did not rethrow")
                        } catch is Abandon {
                            s.rollbacks.add(1, ordering: .relaxed)
                        }
                    } else {
                        try store.write { tx in
                            try s.exclusive(problems) {
                                let a = try tx.tree("accounts")!
                                let meta = try tx.tree("meta")!
                                let seq = try Ledger.bumpSeq(meta)
                                try meta.put(Meta.pad, Ledger.padding(&rng))
                                if roll < 15 {
                                    try Ledger.insertPair(a, meta, &rng)
                                } else if roll < 25 {
                                    try Ledger.deletePair(a, meta, &rng)
                                } else if roll < 30 {
                                    try Ledger.putBlob(try tx.tree("blobs")!, seq: seq)
                                } else {
                                    try Ledger.transfer(a, &rng, times: Int.random(in: 1...4, using: &rng))
                                }
                            }
                        }
                        s.commits.add(1, ordering: .sequentiallyConsistent)
                        s.threadCommits.add(1, ordering: .relaxed)
                    }
                    let now = ContinuousClock.now
                    if now - lastCheckpoint >= .milliseconds(1500) {
                        try store.checkpoint()
                        s.checkpoints.add(1, ordering: .sequentiallyConsistent)
                        lastCheckpoint = now
                    }
                    if now - lastCompaction >= .milliseconds(1000) {
                        try store.compact()
                        s.compactions.add(1, ordering: .sequentiallyConsistent)
                        lastCompaction = now
                    }
                } catch {
                    problems.add("writer: \(error)")
                }
            }
        }

        // The async writer: must serialize with the blocking one.
        group.enter()
        let asyncWriter = Task.detached {
            defer { group.leave() }
            var rng = SeededRandom(seed: seed &+ 2)
            // Until the deadline and at least one commit: on a loaded machine (a debug build
            // beside others) the detached task may not get a thread before the deadline, and
            // the test is of its writes, not of the scheduler.
            var committed = false
            while (ContinuousClock.now < deadline || !committed) && !problems.stop {
                do {
                    try await store.write { tx in
                        try s.exclusive(problems) {
                            let a = try tx.tree("accounts")!
                            let meta = try tx.tree("meta")!
                            _ = try Ledger.bumpSeq(meta)
                            try meta.put(Meta.pad, Ledger.padding(&rng))
                            try Ledger.transfer(a, &rng, times: 2)
                        }
                    }
                    s.commits.add(1, ordering: .sequentiallyConsistent)
                    s.asyncCommits.add(1, ordering: .relaxed)
                    committed = true
                } catch {
                    problems.add("async writer: \(error)")
                }
                await Task.yield()
            }
        }

        // Readers.
        for r in 0..<4 {
            spawnThread(group, "reader \(r)") {
                var rng = SeededRandom(seed: seed &+ 100 &+ UInt64(r))
                var lastTxid: UInt64 = 0
                var lastSeq: Int64 = -1
                var lastBackup = ContinuousClock.now
                while ContinuousClock.now < deadline && !problems.stop {
                    do {
                        if r == 0 && ContinuousClock.now - lastBackup >= .seconds(1) {
                            // A backup (no gate) and `info` (the gate, from a reader thread)
                            // while the writers run.
                            lastBackup = ContinuousClock.now
                            let info = try store.info()
                            if !info.trees.contains(where: { $0.name == "accounts" }) { problems.add("info lost the accounts tree") }
                            let n = s.backups.add(1, ordering: .relaxed).newValue
                            let dest = "\(dirPath)/backup-\(n).strata"
                            let copied = try store.backup(to: dest)
                            var ro = testOptions(.normal)
                            ro.readOnly = true
                            let backup = try Store(path: dest, options: ro)
                            let d = try backup.read { try Ledger.verify($0, t0: t0, &rng) }
                            if d.txid != copied.transactionID { problems.add("backup at txid \(d.txid), report says \(copied.transactionID)") }
                            try backup.close()
                            _ = unlink(dest)
                            _ = unlink(Store.lockPath(for: dest))
                        }
                        let snap = try store.snapshot()
                        defer { snap.close() }
                        let d = try Ledger.verify(snap, t0: t0, &rng)
                        s.reads.add(1, ordering: .relaxed)
                        if d.txid < lastTxid || d.seq < lastSeq {
                            problems.add("reader \(r): snapshot went back in time: txid \(lastTxid) -> \(d.txid), seq \(lastSeq) -> \(d.seq)")
                        }
                        lastTxid = d.txid
                        lastSeq = d.seq
                        guard Int.random(in: 0..<4, using: &rng) == 0 else { continue }

                        // Hold the snapshot across later commits (and, half the time, until a
                        // compaction has replaced the file), re-reading it all the while.
                        let commits0 = s.commits.load(ordering: .sequentiallyConsistent)
                        let checkpoints0 = s.checkpoints.load(ordering: .sequentiallyConsistent)
                        let compactions0 = s.compactions.load(ordering: .sequentiallyConsistent)
                        let wantCommits = commits0 + 3 + Int.random(in: 0..<20, using: &rng)
                        let wantCompaction = Bool.random(using: &rng)
                        let giveUp = ContinuousClock.now + .seconds(2)
                        while !problems.stop && ContinuousClock.now < giveUp {
                            let again = try Ledger.verify(snap, t0: t0, &rng)
                            s.reads.add(1, ordering: .relaxed)
                            if again != d {
                                problems.add("reader \(r): held snapshot changed: \(d) then \(again)")
                                break
                            }
                            if s.commits.load(ordering: .sequentiallyConsistent) >= wantCommits
                                && (!wantCompaction || s.compactions.load(ordering: .sequentiallyConsistent) > compactions0) { break }
                            usleep(UInt32.random(in: 200...2000, using: &rng))
                        }
                        let final = try Ledger.verify(snap, t0: t0, &rng)
                        if final != d { problems.add("reader \(r): held snapshot changed: \(d) then \(final)") }
                        s.holds.add(1, ordering: .relaxed)
                        if s.commits.load(ordering: .sequentiallyConsistent) > commits0 { s.holdsAcrossCommits.add(1, ordering: .relaxed) }
                        if s.checkpoints.load(ordering: .sequentiallyConsistent) > checkpoints0 { s.holdsAcrossCheckpoint.add(1, ordering: .relaxed) }
                        if s.compactions.load(ordering: .sequentiallyConsistent) > compactions0 { s.holdsAcrossCompaction.add(1, ordering: .relaxed) }
                    } catch {
                        problems.add("reader \(r): \(error)")
                    }
                }
            }
        }

        let joined = await wait(group, seconds: seconds + 120)
        #expect(joined, "stress participants did not finish (deadlock?)")
        guard joined else { return }  // The store's gate may be stuck: leave it.
        await asyncWriter.value
        #expect(s.exclusiveViolations.load(ordering: .relaxed) == 0)

        let stats = store.statistics
        print("""
            [stress] commits \(s.commits.load(ordering: .relaxed)) (thread \(s.threadCommits.load(ordering: .relaxed)), \
            async \(s.asyncCommits.load(ordering: .relaxed))), rolled back \(s.rollbacks.load(ordering: .relaxed)), \
            reads \(s.reads.load(ordering: .relaxed)), holds \(s.holds.load(ordering: .relaxed)) \
            (across commits \(s.holdsAcrossCommits.load(ordering: .relaxed)), \
            checkpoints \(s.holdsAcrossCheckpoint.load(ordering: .relaxed)), \
            compactions \(s.holdsAcrossCompaction.load(ordering: .relaxed))), \
            explicit checkpoints \(s.checkpoints.load(ordering: .relaxed)), compactions \(s.compactions.load(ordering: .relaxed)), \
            backups \(s.backups.load(ordering: .relaxed)); \
            store: commits \(stats.commits), checkpoints \(stats.checkpoints) (\(stats.checkpoints - s.checkpoints.load(ordering: .relaxed)) automatic), \
            compactions \(stats.compactions), syncs \(stats.syncCount)
            """)
        let found = problems.all
        #expect(found.isEmpty, "\(found.count) problems, first: \(found.prefix(5).joined(separator: " | "))")
        #expect(s.asyncCommits.load(ordering: .relaxed) > 0, "the async writer never committed")
        #expect(s.threadCommits.load(ordering: .relaxed) > 0, "the writer thread never committed")
        #expect(s.reads.load(ordering: .relaxed) > 0)
        if s.compactions.load(ordering: .relaxed) > 1 {
            #expect(s.holdsAcrossCompaction.load(ordering: .relaxed) > 0, "no snapshot was held across a compaction")
        }

        // The final state, after reopening, still holds the invariants.
        let finalCommits = s.commits.load(ordering: .relaxed)
        try store.close()
        let reopened = try Store(path: path, options: options)
        var rng = SeededRandom(seed: seed &+ 7)
        try reopened.read { snap in
            let d = try Ledger.verify(snap, t0: t0, &rng)
            #expect(d.seq == Int64(finalCommits), "reopened at seq \(d.seq), \(finalCommits) commits made")
        }
        let report = try reopened.check()
        #expect(report.isClean, "\(report.problems)")
        try reopened.close()
    }

    // MARK: 2. Group commit

    @Test func groupCommitSharesSyncs() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("group.strata")
        let threads = 4
        let perThread = 200
        let store = try Store(path: path, options: testOptions(.full))
        try await store.write { tx in _ = try tx.createTree("g") }
        let before = store.statistics
        let problems = Problems()
        let group = DispatchGroup()
        let start = ContinuousClock.now
        for t in 0..<threads {
            spawnThread(group, "committer \(t)") {
                for i in 0..<perThread {
                    do {
                        try store.write { tx in
                            try tx.tree("g")!.put(key(t * 1000 + i), bytes("v\(t)-\(i)"))
                        }
                    } catch {
                        problems.add("committer \(t): \(error)")
                        return
                    }
                }
            }
        }
        let joined = await wait(group, seconds: 300)
        #expect(joined, "committers did not finish (deadlock?)")
        guard joined else { return }
        let elapsed = ContinuousClock.now - start
        let after = store.statistics
        let commits = after.commits - before.commits
        let syncs = after.syncCount - before.syncCount
        print("""
            [group commit] \(commits) commits, \(syncs) syncs during them (\(after.syncCount) in all, \
            \(after.commits) commits in all): \
            \(String(format: "%.3f", Double(syncs) / Double(max(commits, 1)))) syncs per commit, \(elapsed)
            """)
        let found = problems.all
        #expect(found.isEmpty, "\(found.prefix(5).joined(separator: " | "))")
        #expect(commits == threads * perThread)
        // One sync per commit at worst, plus a few for open (and its header write).
        #expect(after.syncCount <= after.commits + 4)
        try store.close()

        let reopened = try Store(path: path, options: testOptions(.full))
        try reopened.read { snap in
            let g = try #require(try snap.tree("g"))
            #expect(try g.count == threads * perThread)
            var missing = 0
            for t in 0..<threads {
                for i in 0..<perThread {
                    if try g.get(key(t * 1000 + i)) != bytes("v\(t)-\(i)") { missing += 1 }
                }
            }
            #expect(missing == 0, "\(missing) puts lost after reopen")
        }
        try reopened.close()
    }

    // MARK: 3. The writer gate

    @Test func writerGateIsFairAndExclusive() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("gate.strata")
        let store = try Store(path: path, options: testOptions(.full))
        try await store.write { tx in _ = try tx.createTree("w") }
        let problems = Problems()
        let gauge = GateGauge()

        @Sendable func body(_ tx: WriteTransaction, _ k: [UInt8], _ waitStart: ContinuousClock.Instant) throws {
            gauge.noteWait(ContinuousClock.now - waitStart)
            gauge.enter()
            defer { gauge.leave() }
            let t = try tx.tree("w")!
            try t.put(k, k)
            // Stay inside a little so an overlapping writer would be caught.
            for _ in 0..<3 { sched_yield() }
            _ = try t.get(k)
            gauge.check()
        }

        // Phase A: contention. Threads and tasks write; one thread also checkpoints and compacts.
        let threadCount = 6, taskCount = 6, perWriter = 60
        let group = DispatchGroup()
        for t in 0..<threadCount {
            spawnThread(group, "gate thread \(t)") {
                for i in 0..<perWriter {
                    do {
                        let start = ContinuousClock.now
                        try store.write { tx in try body(tx, key(t * 1000 + i), start) }
                    } catch { problems.add("thread \(t): \(error)") }
                }
            }
        }
        spawnThread(group, "maintenance") {
            for i in 0..<12 {
                do {
                    if i % 3 == 2 { try store.compact() } else { try store.checkpoint() }
                } catch { problems.add("maintenance: \(error)") }
                usleep(5_000)
            }
        }
        for t in 0..<taskCount {
            group.enter()
            Task.detached {
                defer { group.leave() }
                for i in 0..<perWriter {
                    do {
                        let start = ContinuousClock.now
                        try await store.write { tx in try body(tx, key(100_000 + t * 1000 + i), start) }
                    } catch { problems.add("task \(t): \(error)") }
                }
            }
        }
        let joined = await wait(group, seconds: 300)
        #expect(joined, "writers did not finish: deadlock at the writer gate?")
        guard joined else { return }
        let total = (threadCount + taskCount) * perWriter
        print("[gate] \(gauge.entered.load(ordering: .relaxed)) write closures, overlaps \(gauge.overlaps.load(ordering: .relaxed)), longest wait for the gate \(gauge.maxWaitMicros.load(ordering: .relaxed)) µs")
        #expect(gauge.overlaps.load(ordering: .relaxed) == 0, "two write closures ran at once")
        #expect(gauge.entered.load(ordering: .relaxed) == total)
        let count = try store.read { try $0.tree("w")!.count }
        #expect(count == total)

        // Phase B: first come, first served, threads and tasks alike. A holder keeps the gate
        // while four writers queue up one after another; they must enter in that order.
        let order = Mutex<[String]>([])
        let release = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        let fifo = DispatchGroup()
        spawnThread(fifo, "holder") {
            do {
                try store.write { tx in
                    try tx.tree("w")!.put(bytes("holder"), [1])
                    holding.signal()
                    release.wait()
                }
            } catch { problems.add("holder: \(error)") }
        }
        while holding.wait(timeout: .now()) == .timedOut { try await Task.sleep(for: .milliseconds(5)) }
        for (i, name) in ["thread A", "task B", "thread C", "task D", "thread E"].enumerated() {
            let record: @Sendable (WriteTransaction) throws -> Void = { tx in
                order.withLock { $0.append(name) }
                try tx.tree("w")!.put(bytes(name), [UInt8(i)])
            }
            if name.hasPrefix("thread") {
                spawnThread(fifo, name) {
                    do { try store.write(record) } catch { problems.add("\(name): \(error)") }
                }
            } else {
                fifo.enter()
                Task.detached {
                    defer { fifo.leave() }
                    do { try await store.write(record) } catch { problems.add("\(name): \(error)") }
                }
            }
            try await Task.sleep(for: .milliseconds(150))  // Let it queue before the next one comes.
        }
        release.signal()
        let fifoJoined = await wait(fifo, seconds: 60)
        #expect(fifoJoined, "queued writers did not finish: deadlock at the writer gate?")
        guard fifoJoined else { return }
        let entryOrder = order.withLock { $0 }
        print("[gate] entry order \(entryOrder)")
        #expect(entryOrder == ["thread A", "task B", "thread C", "task D", "thread E"])

        let found = problems.all
        #expect(found.isEmpty, "\(found.prefix(5).joined(separator: " | "))")
        try store.close()
    }
}

extension ConcurrencyTests {
    // MARK: 4. Statistics while writing

    /// `Store.statistics` is public API on a `Sendable` store with no threading caveat, so a
    /// monitoring thread may read it while others write: ThreadSanitizer must stay quiet. The
    /// totals must also only grow (`syncCount` across a compaction included).
    @Test func statisticsCanBeReadWhileWriting() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        var options = testOptions(.full)
        options.checkpointLogBytes = 64 << 10
        let store = try Store(path: dir.file("stats.strata"), options: options)
        _ = try await store.write { tx in _ = try tx.createTree("s") }
        let problems = Problems()
        let done = Atomic<Bool>(false)
        let group = DispatchGroup()
        spawnThread(group, "stats writer") {
            for i in 0..<600 {
                do {
                    try store.write { tx in try tx.tree("s")!.put(key(i), bytes("value \(i)")) }
                    if i % 150 == 149 {
                        // "fdatasync calls on the store file so far": a running total, so a
                        // compaction (which syncs) must not make it smaller.
                        let before = store.statistics.syncCount
                        try store.compact()
                        let after = store.statistics.syncCount
                        if after < before { problems.add("statistics.syncCount fell from \(before) to \(after) across compact()") }
                    }
                } catch { problems.add("writer: \(error)") }
            }
        }
        let monitorDone = DispatchGroup()
        let reads = Atomic<Int>(0)
        spawnThread(monitorDone, "stats monitor") {
            var last = 0
            while !done.load(ordering: .acquiring) {
                let st = store.statistics
                if st.commits < last { problems.add("statistics.commits went from \(last) to \(st.commits)") }
                last = st.commits
                reads.add(1, ordering: .relaxed)
            }
        }
        let joined = await wait(group, seconds: 120)
        done.store(true, ordering: .releasing)
        let monitorJoined = await wait(monitorDone, seconds: 30)
        #expect(joined && monitorJoined)
        guard joined && monitorJoined else { return }
        print("[statistics] \(reads.load(ordering: .relaxed)) reads of Store.statistics during 600 commits and 4 compactions")
        let found = problems.all
        #expect(found.isEmpty, "\(found.prefix(5).joined(separator: " | "))")
        try store.close()
    }

    // MARK: 5. A snapshot closed while other threads use it

    /// Threads read one snapshot's tree (point reads and cursor walks) while another thread
    /// closes it. Each reader sees correct values until the close reaches it, then only
    /// `transactionEnded(.closed)`: never a wrong value, another error or a crash (the pages
    /// stay alive with the handles; the lifetime is one atomic).
    @Test func snapshotClosedWhileInUse() async throws {
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: relOptions(fs))
        try await store.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<2_000 { try t.put(key(i), key(i) + key(i)) }
        }
        let problems = Problems()
        for round in 0..<20 {
            let snapshot = try store.snapshot()
            let tree = try #require(try snapshot.tree("t"))
            let started = Atomic<Int>(0)
            let group = DispatchGroup()
            for reader in 0..<3 {
                spawnThread(group, "reader \(reader)") {
                    started.add(1, ordering: .releasing)
                    var i = reader
                    while true {
                        do {
                            if i % 7 == 0 {
                                let c = tree.makeCursor()
                                var ok = try c.seek(key(i % 2_000))
                                var n = 0
                                while ok && n < 50 {
                                    let k = c.copyKey()
                                    let v = try c.copyValue()
                                    // copyKey is empty once the close reached the cursor.
                                    if !k.isEmpty && v != k + k { problems.add("round \(round): cursor read a wrong value"); return }
                                    ok = try c.next()
                                    n += 1
                                }
                            } else if try tree.get(key(i % 2_000)) != key(i % 2_000) + key(i % 2_000) {
                                problems.add("round \(round): get read a wrong value")
                                return
                            }
                        } catch StrataError.transactionEnded(.closed) {
                            return
                        } catch {
                            problems.add("round \(round): reader threw \(error)")
                            return
                        }
                        i += 3
                    }
                }
            }
            while started.load(ordering: .acquiring) < 3 { try await Task.sleep(nanoseconds: 100_000) }
            try await Task.sleep(nanoseconds: 1_000_000 * UInt64(round % 4))
            snapshot.close()
            if !(await wait(group, seconds: 30)) { problems.add("round \(round): a reader did not stop after the close") }
            if problems.stop { break }
        }
        #expect(problems.all.isEmpty, "\(problems.all)")
        #expect(try store.info().openSnapshots == 0)
        try store.close()
    }
}

// MARK: - The ledger the stress test keeps

private enum Meta {
    static let seq = bytes("seq")
    static let count = bytes("count")
    static let next = bytes("next")
    static let pad = bytes("pad")
}

private struct Abandon: Error {}

private struct Digest: Equatable, CustomStringConvertible {
    var txid: UInt64
    var seq: Int64
    var count: Int
    var hash: UInt64
    var description: String { "(txid \(txid), seq \(seq), count \(count), hash \(String(hash, radix: 16)))" }
}

private struct StressFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

private func enc(_ v: Int64) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }

private func dec(_ b: [UInt8]?, _ what: @autoclosure () -> String) throws -> Int64 {
    guard let b, b.count == 8 else { throw StressFailure("\(what()): value \(b.map { "\($0)" } ?? "missing")") }
    return Int64(littleEndian: b.withUnsafeBytes { $0.loadUnaligned(as: Int64.self) })
}

private func fnv(_ h: inout UInt64, _ bytes: [UInt8]) {
    for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01B3 }
    h = (h ^ 0xFF) &* 0x100_0000_01B3
}

private enum Ledger {
    static func balance(_ a: WriteTree, _ k: [UInt8]) throws -> Int64 {
        try dec(try a.get(k), "balance of \(String(decoding: k, as: UTF8.self))")
    }

    /// Incompressible filler (a random slice of random bytes), so that the commit log reaches
    /// `checkpointLogBytes` between explicit checkpoints and compactions.
    static func padding(_ rng: inout SeededRandom) -> [UInt8] {
        let start = Int.random(in: 0..<3072, using: &rng)
        return Array(noise[start..<start + Int.random(in: 300...1000, using: &rng)])
    }

    static let noise: [UInt8] = {
        var rng = SeededRandom(seed: 42)
        return randomBytes(4096, &rng)
    }()

    static func bumpSeq(_ meta: WriteTree) throws -> Int64 {
        let seq = try dec(try meta.get(Meta.seq), "meta.seq") + 1
        try meta.put(Meta.seq, enc(seq))
        return seq
    }

    /// A random existing account: the first at or after a random id (wrapping).
    static func pick(_ a: WriteTree, _ rng: inout SeededRandom) throws -> [UInt8]? {
        let c = a.makeCursor()
        if try c.seek(key(Int.random(in: 0..<1_000_000, using: &rng) % 50_000)) { return c.copyKey() }
        return try c.first() ? c.copyKey() : nil
    }

    static func transfer(_ a: WriteTree, _ rng: inout SeededRandom, times: Int) throws {
        for _ in 0..<times {
            guard let x = try pick(a, &rng), let y = try pick(a, &rng), x != y else { continue }
            let amount = Int64.random(in: -5_000...5_000, using: &rng)
            try a.put(x, enc(try balance(a, x) - amount))
            try a.put(y, enc(try balance(a, y) + amount))
        }
    }

    static func insertPair(_ a: WriteTree, _ meta: WriteTree, _ rng: inout SeededRandom) throws {
        let count = try dec(try meta.get(Meta.count), "meta.count")
        guard count < 400 else { return try transfer(a, &rng, times: 1) }
        let next = try dec(try meta.get(Meta.next), "meta.next")
        let v = Int64.random(in: -1_000_000...1_000_000, using: &rng)
        try a.put(key(Int(next)), enc(v))
        try a.put(key(Int(next) + 1), enc(-v))
        try meta.put(Meta.next, enc(next + 2))
        try meta.put(Meta.count, enc(count + 2))
    }

    /// Deletes two accounts and moves their balances into a third.
    static func deletePair(_ a: WriteTree, _ meta: WriteTree, _ rng: inout SeededRandom) throws {
        let count = try dec(try meta.get(Meta.count), "meta.count")
        guard count > 100 else { return try transfer(a, &rng, times: 1) }
        for _ in 0..<5 {
            guard let x = try pick(a, &rng), let y = try pick(a, &rng), let z = try pick(a, &rng),
                  x != y, y != z, x != z else { continue }
            let total = try balance(a, x) + balance(a, y)
            try a.put(z, enc(try balance(a, z) + total))
            guard try a.delete(x), try a.delete(y) else { throw StressFailure("picked account vanished") }
            try meta.put(Meta.count, enc(count - 2))
            return
        }
    }

    static func blob(seq: Int64) -> [UInt8] {
        let length = 1500 + Int(seq * 37 % 5000)
        var v = enc(seq) + enc(Int64(length))
        v.reserveCapacity(length)
        for i in 16..<length { v.append(UInt8(truncatingIfNeeded: Int(seq) &* 31 &+ i)) }
        return v
    }

    static func putBlob(_ blobs: WriteTree, seq: Int64) throws {
        try blobs.put(bytes("blob-\(seq % 8)"), blob(seq: seq))
    }

    /// Checks every invariant on `snap`, through a cursor scan and through point reads.
    static func verify(_ snap: ReadTransaction, t0: UInt64, _ rng: inout SeededRandom) throws -> Digest {
        guard let accounts = try snap.tree("accounts"), let meta = try snap.tree("meta"),
              let blobs = try snap.tree("blobs") else { throw StressFailure("tree missing in txid \(snap.transactionID)") }
        let seq = try dec(try meta.get(Meta.seq), "meta.seq")
        let count = try dec(try meta.get(Meta.count), "meta.count")
        let next = try dec(try meta.get(Meta.next), "meta.next")
        let txid = snap.transactionID
        func fail(_ what: String) -> StressFailure { StressFailure("txid \(txid) seq \(seq): \(what)") }
        guard txid == t0 + UInt64(seq) else { throw fail("transactionID - seq = \(Int64(txid) - seq), expected \(t0)") }
        guard try accounts.count == Int(count) else { throw fail("accounts.count \(try accounts.count), meta.count \(count)") }
        guard count % 2 == 0 else { throw fail("odd number of accounts \(count)") }

        // Cursor scan.
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        var sum: Int64 = 0
        var n = 0
        var scanned: [([UInt8], [UInt8])] = []
        scanned.reserveCapacity(Int(count))
        let c = accounts.makeCursor()
        var ok = try c.first()
        var previous: [UInt8]? = nil
        while ok {
            let k = c.copyKey()
            let v = try c.copyValue()
            if let previous, !previous.lexicographicallyPrecedes(k) { throw fail("scan out of order") }
            guard let id = Int(String(decoding: k, as: UTF8.self)), id < next else { throw fail("unexpected key \(k)") }
            sum = sum &+ (try dec(v, "scanned balance"))
            n += 1
            fnv(&hash, k)
            fnv(&hash, v)
            scanned.append((k, v))
            previous = k
            ok = try c.next()
        }
        guard n == Int(count) else { throw fail("scan saw \(n) accounts, count says \(count)") }
        guard sum == 0 else { throw fail("scan sum \(sum)") }

        // Point reads of every account, and a few that must be absent.
        var getSum: Int64 = 0
        for (k, v) in scanned {
            guard let got = try accounts.get(k) else { throw fail("get(\(String(decoding: k, as: UTF8.self))) is nil, the scan saw it") }
            guard got == v else { throw fail("get and scan disagree on \(String(decoding: k, as: UTF8.self))") }
            getSum = getSum &+ (try dec(got, "got balance"))
        }
        guard getSum == 0 else { throw fail("get sum \(getSum)") }
        for _ in 0..<4 {
            let absent = Int(next) + Int.random(in: 0..<1000, using: &rng)
            if try accounts.get(key(absent)) != nil || accounts.contains(key(absent)) { throw fail("id \(absent) ≥ next is present") }
        }
        if try accounts.get(key(9_999_999)) != nil { throw fail("a rolled-back key is visible") }

        // Now and then, the reverse range API must agree.
        if Int.random(in: 0..<4, using: &rng) == 0 {
            let reversed = try accounts.entries(reverse: true)
            guard reversed.count == scanned.count,
                  zip(reversed.reversed(), scanned).allSatisfy({ $0.key == $1.0 && $0.value == $1.1 }) else {
                throw fail("reverse entries disagree with the forward scan")
            }
        }

        // Blobs (overflow values).
        let bc = blobs.makeCursor()
        ok = try bc.first()
        var blobCount = 0
        while ok {
            let k = bc.copyKey()
            let v = try bc.copyValue()
            let blobSeq = try dec(Array(v.prefix(8)), "blob seq")
            guard blobSeq <= seq, v == blob(seq: blobSeq) else { throw fail("blob \(String(decoding: k, as: UTF8.self)) is damaged (seq \(blobSeq))") }
            guard try blobs.get(k) == v else { throw fail("blob get and scan disagree") }
            fnv(&hash, v)
            blobCount += 1
            ok = try bc.next()
        }
        guard try blobCount == blobs.count else { throw fail("blob scan \(blobCount), count \(try blobs.count)") }
        return Digest(txid: txid, seq: seq, count: Int(count), hash: hash)
    }
}

// MARK: - Harness

private final class StressState: Sendable {
    let commits = Atomic<Int>(0)
    let threadCommits = Atomic<Int>(0)
    let asyncCommits = Atomic<Int>(0)
    let rollbacks = Atomic<Int>(0)
    let reads = Atomic<Int>(0)
    let holds = Atomic<Int>(0)
    let holdsAcrossCommits = Atomic<Int>(0)
    let holdsAcrossCheckpoint = Atomic<Int>(0)
    let holdsAcrossCompaction = Atomic<Int>(0)
    let checkpoints = Atomic<Int>(0)
    let compactions = Atomic<Int>(0)
    let backups = Atomic<Int>(0)
    let inWrite = Atomic<Int>(0)
    let exclusiveViolations = Atomic<Int>(0)

    /// Runs a write closure's body, checking that no other write closure runs meanwhile.
    func exclusive<T>(_ problems: Problems, _ body: () throws -> T) throws -> T {
        if inWrite.add(1, ordering: .sequentiallyConsistent).newValue != 1 {
            exclusiveViolations.add(1, ordering: .relaxed)
            problems.add("two write closures overlap")
        }
        defer { inWrite.subtract(1, ordering: .sequentiallyConsistent) }
        return try body()
    }
}

private final class GateGauge: Sendable {
    let inside = Atomic<Int>(0)
    let overlaps = Atomic<Int>(0)
    let entered = Atomic<Int>(0)
    let maxWaitMicros = Atomic<Int>(0)

    func noteWait(_ waited: Duration) {
        let micros = Int(waited.components.seconds) * 1_000_000 + Int(waited.components.attoseconds / 1_000_000_000_000)
        var m = maxWaitMicros.load(ordering: .relaxed)
        while micros > m {
            let (exchanged, original) = maxWaitMicros.compareExchange(expected: m, desired: micros, ordering: .relaxed)
            if exchanged { break }
            m = original
        }
    }

    func enter() {
        if inside.add(1, ordering: .sequentiallyConsistent).newValue != 1 { overlaps.add(1, ordering: .relaxed) }
        entered.add(1, ordering: .relaxed)
    }

    func check() {
        if inside.load(ordering: .sequentiallyConsistent) != 1 { overlaps.add(1, ordering: .relaxed) }
    }

    func leave() { inside.subtract(1, ordering: .sequentiallyConsistent) }
}

private final class Once: Sendable {
    private let done = Atomic<Bool>(false)
    /// `true` for the first caller only.
    func claim() -> Bool { !done.exchange(true, ordering: .acquiringAndReleasing) }
}

private final class Problems: Sendable {
    private let list = Mutex<[String]>([])
    private let stopFlag = Atomic<Bool>(false)

    func add(_ s: String) {
        list.withLock { if $0.count < 100 { $0.append(s) } }
        stopFlag.store(true, ordering: .releasing)
    }

    var stop: Bool { stopFlag.load(ordering: .acquiring) }
    var all: [String] { list.withLock { $0 } }
}

private func stressSeconds() -> Double {
    if let s = ProcessInfo.processInfo.environment["STRATA_STRESS_SECONDS"], let v = Double(s), v > 0 { return v }
    return 10
}

/// Starts a thread that runs `body` inside `group`.
private func spawnThread(_ group: DispatchGroup, _ name: String, _ body: @escaping @Sendable () -> Void) {
    group.enter()
    let t = Thread {
        body()
        group.leave()
    }
    t.name = name
    t.stackSize = 4 << 20
    t.start()
}

/// Waits for `group` without blocking a thread of the cooperative pool; `false` on timeout.
private func wait(_ group: DispatchGroup, seconds: Double) async -> Bool {
    let once = Once()
    return await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
        group.notify(queue: .global()) {
            if once.claim() { c.resume(returning: true) }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            if once.claim() { c.resume(returning: false) }
        }
    }
}
