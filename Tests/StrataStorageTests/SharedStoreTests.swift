import Foundation
import Testing
@testable import StrataStorage

/// Several handles writing one store with ``ProcessSharing/shared(lockTimeout:)``. Two handles in
/// one process hold two open file descriptions, whose `flock`s exclude each other exactly as two
/// processes' do, so these tests exercise the protocol without forking; `MultiProcessTests` in
/// the tool tests runs real processes.
@Suite struct SharedStoreTests {
    static func sharedOptions(_ tweak: (inout StoreOptions) -> Void = { _ in }) -> StoreOptions {
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared(lockTimeout: .seconds(5))
        tweak(&options)
        return options
    }

    /// Every entry of every tree, as one handle sees it now.
    static func contents(_ store: Store) throws -> [String: [[UInt8]: [UInt8]]] {
        try store.read { tx in
            var all: [String: [[UInt8]: [UInt8]]] = [:]
            for name in try tx.treeNames {
                var entries: [[UInt8]: [UInt8]] = [:]
                for (key, value) in try tx.tree(name)!.entries() { entries[key] = value }
                all[name] = entries
            }
            return all
        }
    }

    @Test func eachHandleSeesTheOthersCommits() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("shared.strata")
        let first = try Store(path: path, options: Self.sharedOptions())
        let second = try Store(path: path, options: Self.sharedOptions())
        try first.write { try $0.treeCreatingIfMissing("t").put(bytes("a"), bytes("1")) }
        // A snapshot of the other handle starts from the newest commit.
        #expect(try second.read { try $0.tree("t")?.get(bytes("a")) } == bytes("1"))
        try second.write { try $0.tree("t")!.put(bytes("b"), bytes("2")) }
        try first.write { tx in
            let tree = try tx.tree("t")!
            #expect(try tree.get(bytes("b")) == bytes("2"))
            try tree.put(bytes("c"), bytes("3"))
        }
        #expect(try Self.contents(second)["t"]?.count == 3)
        #expect(first.lastCommittedTransactionID == second.lastCommittedTransactionID)
        try first.close()
        try second.close()
        let reopened = try Store(path: path)
        defer { try? reopened.close() }
        #expect(try Self.contents(reopened)["t"] == [bytes("a"): bytes("1"), bytes("b"): bytes("2"),
                                                     bytes("c"): bytes("3")])
        #expect(try reopened.check().isClean)
    }

    @Test func aSnapshotKeepsItsViewWhileAnotherHandleCommits() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("shared.strata")
        let first = try Store(path: path, options: Self.sharedOptions())
        let second = try Store(path: path, options: Self.sharedOptions())
        defer { try? first.close(); try? second.close() }
        try first.write { try $0.treeCreatingIfMissing("t").put(bytes("k"), bytes("old")) }
        let pinned = try second.snapshot()
        defer { pinned.close() }
        try first.write { try $0.tree("t")!.put(bytes("k"), bytes("new")) }
        #expect(try pinned.tree("t")?.get(bytes("k")) == bytes("old"))
        #expect(try second.read { try $0.tree("t")?.get(bytes("k")) } == bytes("new"))
    }

    @Test func aReadOnlyHandleOfASharedStoreFollowsTheWriters() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("shared.strata")
        // The writer holds the store exclusively: the follower only reads.
        let writer = try Store(path: path, options: StoreOptions(durability: .normal))
        try writer.write { try $0.treeCreatingIfMissing("t").put(bytes("a"), bytes("1")) }
        let follower = try Store(path: path, options: Self.sharedOptions { $0.readOnly = true })
        let frozen = try Store(path: path, options: StoreOptions(durability: .normal).readOnlyCopy)
        defer { try? follower.close(); try? frozen.close() }
        try writer.write { try $0.tree("t")!.put(bytes("b"), bytes("2")) }
        #expect(try follower.read { try $0.tree("t")?.get(bytes("b")) } == bytes("2"))
        #expect(try frozen.read { try $0.tree("t")?.get(bytes("b")) } == nil)
        try writer.checkpoint()
        try writer.write { try $0.tree("t")!.put(bytes("c"), bytes("3")) }
        #expect(try Self.contents(follower)["t"]?.count == 3)
        try writer.compact()
        try writer.write { try $0.tree("t")!.put(bytes("d"), bytes("4")) }
        #expect(try Self.contents(follower)["t"]?.count == 4)
        #expect(try follower.check().isClean)
        try writer.close()
        #expect(try Self.contents(follower)["t"]?.count == 4)
    }

    /// Damage in another process's frames is judged as recovery judges it: a later frame says
    /// the damaged one had been synced, so the write fails `corrupt` and nothing is cut.
    @Test func damageFoundWhileCatchingUpIsReportedNotCut() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("shared.strata")
        let options = Self.sharedOptions { $0.durability = .full }
        let first = try Store(path: path, options: options)
        let second = try Store(path: path, options: options)
        defer { try? first.close(); try? second.close() }
        try first.write { try $0.treeCreatingIfMissing("t").put(bytes("a"), bytes("1")) }
        #expect(try second.read { try $0.tree("t")?.get(bytes("a")) } == bytes("1"))
        let end = try first.info().logBytes
        for i in 0..<3 { try first.write { try $0.tree("t")!.put(key(i), Array(repeating: 9, count: 200)) } }
        // Flip a byte inside the first of the three new frames (each synced: full durability).
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: end + 40)
        let byte = try handle.read(upToCount: 1)!
        try handle.seek(toOffset: end + 40)
        try handle.write(contentsOf: Data([byte[0] ^ 0xFF]))
        try handle.close()
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! UInt64
        do {
            try second.write { try $0.tree("t")!.put(bytes("b"), bytes("2")) }
            Issue.record("a write caught up over damage")
        } catch StrataError.corrupt {
        }
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as! UInt64 == size)
    }

    /// A file system that cannot say which file a path is cannot share a store: another
    /// process's compaction would go unseen.
    @Test func sharingNeedsFileIdentities() throws {
        struct Anonymous: FileSystem {
            let base = PosixFileSystem()
            func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile { try base.open(path, mode: mode) }
            func fileExists(_ path: String) -> Bool { base.fileExists(path) }
            func rename(_ source: String, to destination: String) throws { try base.rename(source, to: destination) }
            func remove(_ path: String) throws { try base.remove(path) }
            func syncDirectory(containing path: String) throws { try base.syncDirectory(containing: path) }
            func lockExclusive(_ path: String) throws -> any FileLock { try base.lockExclusive(path) }
            func lockShared(_ path: String) throws -> any FileLock { try base.lockShared(path) }
        }
        let dir = TempDir()
        defer { dir.cleanup() }
        let options = Self.sharedOptions { $0.fileSystem = Anonymous() }
        #expect(throws: StrataError.self) { try Store(path: dir.file("s.strata"), options: options) }
        // The simulated file system tells its files apart.
        let simulated = Self.sharedOptions { $0.fileSystem = SimulatedFileSystem() }
        let store = try Store(path: "/db/s.strata", options: simulated)
        try store.close()
    }

    @Test func aWriterWaitsForTheLockThenThrowsLocked() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("shared.strata")
        let first = try Store(path: path, options: Self.sharedOptions())
        let second = try Store(path: path, options: Self.sharedOptions { $0.sharing = .shared(lockTimeout: .milliseconds(50)) })
        defer { try? first.close(); try? second.close() }
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Thread {
            try? first.write { tx in
                try tx.treeCreatingIfMissing("t").put(bytes("k"), bytes("v"))
                entered.signal()
                release.wait()
            }
        }
        holder.start()
        entered.wait()
        let started = ContinuousClock.now
        #expect(throws: StrataError.self) { try second.write { try $0.tree("u", createIfMissing: true) } }
        #expect(ContinuousClock.now - started >= .milliseconds(50))
        do {
            try second.write { _ in }
        } catch StrataError.locked(let lockPath) {
            #expect(lockPath == Store.lockPath(for: path))
        } catch {
            Issue.record("expected locked, got \(error)")
        }
        release.signal()
        // Once the other transaction ends, the write goes through and sees its commit.
        var committed = false
        for _ in 0..<200 where !committed {
            do {
                let seen = try second.write { tx in try tx.tree("t")?.get(bytes("k")) }
                #expect(seen == bytes("v"))
                committed = true
            } catch StrataError.locked {
                usleep(1000)
            }
        }
        #expect(committed)
    }

    @Test func anExclusiveOpenShutsSharedWritersOut() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("shared.strata")
        let shared = try Store(path: path, options: Self.sharedOptions { $0.sharing = .shared(lockTimeout: .milliseconds(20)) })
        defer { try? shared.close() }
        try shared.write { try $0.treeCreatingIfMissing("t").put(bytes("a"), bytes("1")) }
        let exclusive = try Store(path: path, options: StoreOptions(durability: .normal))
        #expect(try exclusive.read { try $0.tree("t")?.get(bytes("a")) } == bytes("1"))
        #expect(throws: StrataError.self) { try shared.write { try $0.tree("t")!.put(bytes("b"), bytes("2")) } }
        try exclusive.write { try $0.tree("t")!.put(bytes("c"), bytes("3")) }
        try exclusive.close()
        try shared.write { try $0.tree("t")!.put(bytes("b"), bytes("2")) }
        #expect(try Self.contents(shared)["t"]?.count == 3)
    }

    @Test func checkpointsAndCompactionsOfOneHandleAreAdoptedByTheOther() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("shared.strata")
        let first = try Store(path: path, options: Self.sharedOptions())
        let second = try Store(path: path, options: Self.sharedOptions())
        for i in 0..<300 {
            try first.write { try $0.treeCreatingIfMissing("t").put(key(i), Array(repeating: 7, count: 100)) }
        }
        #expect(try Self.contents(second)["t"]?.count == 300)
        try first.checkpoint()
        try second.write { try $0.tree("t")!.put(key(1000), bytes("after checkpoint")) }
        try second.compact()
        try first.write { tx in
            let tree = try tx.tree("t")!
            #expect(try tree.get(key(1000)) == bytes("after checkpoint"))
            _ = try tree.delete(key(0))
        }
        try first.checkpoint()
        try second.write { try $0.tree("t")!.put(key(1001), bytes("after second checkpoint")) }
        #expect(try Self.contents(first)["t"]?.count == 301)
        try first.close()
        try second.close()
        let reopened = try Store(path: path)
        defer { try? reopened.close() }
        #expect(try Self.contents(reopened)["t"]?.count == 301)
        #expect(try reopened.check().isClean)
    }

    @Test func refreshReportsOtherHandlesCommitsToObservers() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("shared.strata")
        let first = try Store(path: path, options: Self.sharedOptions())
        let second = try Store(path: path, options: Self.sharedOptions())
        defer { try? first.close(); try? second.close() }
        let seen = Mutex<[ClosedRange<UInt64>]>([])
        let token = second.addOtherProcessCommitObserver { range in seen.withLock { $0.append(range) } }
        #expect(try second.refresh() == false)
        try first.write { try $0.treeCreatingIfMissing("t").put(bytes("a"), bytes("1")) }
        try first.write { try $0.tree("t")!.put(bytes("b"), bytes("2")) }
        #expect(try second.refresh())
        #expect(seen.withLock { $0 } == [1...2])
        // Its own commits are not other processes'.
        try second.write { try $0.tree("t")!.put(bytes("c"), bytes("3")) }
        #expect(seen.withLock { $0 } == [1...2])
        second.removeOtherProcessCommitObserver(token)
        try first.write { try $0.tree("t")!.put(bytes("d"), bytes("4")) }
        #expect(try second.refresh())
        #expect(seen.withLock { $0 } == [1...2])
    }

    @Test func waitForCommitWakesOnAnotherHandlesCommit() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("shared.strata")
        let first = try Store(path: path, options: Self.sharedOptions())
        let second = try Store(path: path, options: Self.sharedOptions())
        defer { try? first.close(); try? second.close() }
        #expect(try await second.waitForCommit(after: 0, timeout: .milliseconds(30)) == nil)
        let writer = Task.detached {
            try await Task.sleep(for: .milliseconds(50))
            try await first.write { try $0.treeCreatingIfMissing("t").put(bytes("a"), bytes("1")) }
        }
        let started = ContinuousClock.now
        #expect(try await second.waitForCommit(after: 0, timeout: .seconds(10)) == 1)
        #expect(ContinuousClock.now - started < .seconds(5))
        try await writer.value
    }

    /// Random operations from several handles on one store, each handle's view compared with a
    /// model after every operation: puts and deletes of small and overflow values, trees
    /// created and dropped, checkpoints, compactions, closes and reopens.
    @Test(arguments: [UInt64(20261127), 7, 42])
    func randomOperationsFromSeveralHandles(seed: UInt64) throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("shared.strata")
        var rng = SeededRandom(seed: seed)
        let options = Self.sharedOptions {
            $0.checkpointLogBytes = 16 << 10
            $0.checkpointStepPages = 2
            $0.durability = seed % 2 == 0 ? .full : .normal
        }
        var handles = try (0..<3).map { _ in try Store(path: path, options: options) }
        var model: [String: [[UInt8]: [UInt8]]] = [:]
        for step in 0..<400 {
            let index = Int.random(in: 0..<handles.count, using: &rng)
            let handle = handles[index]
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<70:
                let tree = "t\(Int.random(in: 0..<3, using: &rng))"
                var changes: [([UInt8], [UInt8]?)] = []
                for _ in 0..<Int.random(in: 1...8, using: &rng) {
                    let k = key(Int.random(in: 0..<200, using: &rng))
                    if Bool.random(using: &rng) && Int.random(in: 0..<4, using: &rng) == 0 {
                        changes.append((k, nil))
                    } else {
                        let length = Int.random(in: 0..<10, using: &rng) == 0 ? 3000 : Int.random(in: 1...60, using: &rng)
                        changes.append((k, randomBytes(length, &rng)))
                    }
                }
                try handle.write { tx in
                    let writeTree = try tx.treeCreatingIfMissing(tree)
                    for (k, value) in changes {
                        if let value { try writeTree.put(k, value) } else { _ = try writeTree.delete(k) }
                    }
                }
                for (k, value) in changes { model[tree, default: [:]][k] = value }
            case 70..<75:
                let tree = "t\(Int.random(in: 0..<3, using: &rng))"
                try handle.write { tx in if try tx.tree(tree) != nil { try tx.dropTree(tree) } }
                model[tree] = nil
            case 75..<82:
                try handle.checkpoint()
            case 82..<86:
                try handle.compact()
            case 86..<92:
                try handle.close()
                handles[index] = try Store(path: path, options: options)
            default:
                break
            }
            // Every handle sees the model (empty trees and missing ones alike).
            for (i, other) in handles.enumerated() {
                let seen = try Self.contents(other).filter { !$0.value.isEmpty }
                let expected = model.filter { !$0.value.isEmpty }
                if seen != expected {
                    let message = "seed \(seed), step \(step): handle \(i) sees \(seen.mapValues(\.count)), "
                        + "expected \(expected.mapValues(\.count))"
                    Issue.record(Comment(rawValue: message))
                    return
                }
            }
        }
        for handle in handles { try handle.close() }
        let reopened = try Store(path: path)
        defer { try? reopened.close() }
        #expect(try Self.contents(reopened).filter { !$0.value.isEmpty } == model.filter { !$0.value.isEmpty },
                "seed \(seed)")
        let report = try reopened.check()
        #expect(report.isClean, "seed \(seed): \(report.problems)")
    }
}

import Synchronization

extension StoreOptions {
    /// The same options, read-only.
    var readOnlyCopy: StoreOptions {
        var copy = self
        copy.readOnly = true
        return copy
    }
}
