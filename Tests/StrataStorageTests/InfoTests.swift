import Testing
@testable import StrataStorage
#if canImport(Glibc)
import Glibc
#endif

/// `Store.info()` and the status record in the lock file that `strata info` reads.
@Suite struct InfoTests {
    /// Writes `n` keys (values of `size` bytes) in one transaction and checkpoints, so the
    /// previous pages and commit frames become garbage.
    private func rewrite(_ store: Store, round: Int, n: Int = 2000, size: Int = 100) throws {
        try store.write { tx in
            let t = try tx.treeCreatingIfMissing("main")
            for i in 0..<n { try t.put(key(i), [UInt8](repeating: UInt8(truncatingIfNeeded: round), count: size)) }
        }
        try store.checkpoint()
    }

    @Test func infoDescribesHeaderSpaceAndTrees() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("a.strata")
        let store = try Store(path: path, options: testOptions())
        try rewrite(store, round: 1)
        try store.write { tx in _ = try tx.createTree("empty") }
        let info = try store.info()
        #expect(info.formatVersion == Format.version)
        #expect(info.pageSize == Format.defaultPageSize)
        #expect(info.transactionID == 2)
        #expect(info.checkpointTransactionID == 1)
        #expect(info.trees.map(\.name) == ["empty", "main"])
        #expect(info.trees[0].entries == 0 && info.trees[0].height == 0)
        #expect(info.trees[1].entries == 2000 && info.trees[1].height >= 2)
        #expect(info.liveBytes + info.deadBytes == info.logBytes)
        #expect(info.fileBytes >= info.logBytes)
        #expect(info.openSnapshots == 0 && info.oldestSnapshot == nil)
        #expect(info.writerStatus == nil)
        try store.close()

        // A read-only open sees the same header and trees, and the trimmed file is all log.
        var options = testOptions()
        options.readOnly = true
        let reader = try Store(path: path, options: options)
        let ro = try reader.info()
        #expect(ro.isReadOnly)
        #expect(ro.transactionID == 2)
        #expect(ro.trees.map(\.entries) == [0, 2000])
        #expect(ro.fileBytes == ro.logBytes)
        #expect(ro.liveBytes + ro.deadBytes == ro.logBytes)
        try reader.close()
        #expect(throws: StrataError.closed("store")) { try reader.info() }
    }

    @Test func oldSnapshotIsOldestAndHoldsBackGarbage() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("a.strata")
        let store = try Store(path: path, options: testOptions())
        try rewrite(store, round: 1)
        let old = try store.snapshot()
        let oldTxid = old.transactionID
        for round in 2...4 { try rewrite(store, round: round) }
        let newer = try store.snapshot()

        let info = try store.info()
        #expect(info.openSnapshots == 2)
        let oldest = try #require(info.oldestSnapshot)
        #expect(oldest.transactionID == oldTxid)
        #expect(oldest.transactionID < newer.transactionID)
        #expect(oldest.heldBackBytes > 0)
        #expect(oldest.heldBackBytes <= info.deadBytes)
        #expect(oldest.age >= .zero)

        // The same, as another process would read it from the lock file.
        store.gate.lock()
        store.writeStatus()
        store.gate.unlock()
        let status = try #require(StoreStatus.read(storePath: path))
        #expect(status.pid == getpid())
        #expect(status.isOpen)
        #expect(status.transactionID == info.transactionID)
        #expect(status.readers == 2)
        #expect(status.oldestSnapshotTransactionID == oldTxid)
        #expect(status.heldBackBytes == oldest.heldBackBytes)
        #expect(status.deadBytes == info.deadBytes)
        #expect(status.logBytes == info.logBytes)

        // A read-only handle (what `strata info` opens) carries the writer's record.
        var options = testOptions()
        options.readOnly = true
        let reader = try Store(path: path, options: options)
        #expect(try reader.info().writerStatus == status)
        try reader.close()

        // Once the old snapshot ends, the newer one is the oldest and holds nothing back.
        old.close()
        let after = try store.info()
        #expect(after.openSnapshots == 1)
        #expect(after.oldestSnapshot?.transactionID == newer.transactionID)
        #expect(after.oldestSnapshot?.heldBackBytes == 0)
        newer.close()
        #expect(try store.info().oldestSnapshot == nil)

        store.gate.lock()
        store.writeStatus(closing: true)
        store.gate.unlock()
        let closed = try #require(StoreStatus.read(storePath: path))
        #expect(!closed.isOpen && closed.readers == 0 && closed.oldestSnapshotTransactionID == nil)
        try store.close()
    }

    @Test func statusLineRoundTripsAndRejectsTornRecords() throws {
        let status = StoreStatus(pid: 42, isOpen: true, transactionID: 981, readers: 2, oldestSnapshotTransactionID: 12,
                                 oldestSnapshotAgeMilliseconds: 73_020, heldBackBytes: 5 << 20, deadBytes: 6 << 20,
                                 logBytes: 9 << 20, updatedMilliseconds: 1_732_263_712_345)
        let line = status.line
        #expect(line.hasPrefix("pid=42 state=open txid=981 readers=2 oldest_snapshot_txid=12 oldest_snapshot_age_ms=73020 held_back_bytes=5242880 "))
        #expect(line.hasSuffix("\n"))
        #expect(StoreStatus(line: String(line.dropLast())) == status)

        var none = status
        none.oldestSnapshotTransactionID = nil
        none.oldestSnapshotAgeMilliseconds = nil
        #expect(none.line.contains("oldest_snapshot_txid=- oldest_snapshot_age_ms=-"))
        #expect(StoreStatus(line: String(none.line.dropLast())) == none)

        // A reader racing the in-place rewrite can see a mix of two records: the CRC rejects it.
        var torn = Array(line.utf8)
        torn[10] = UInt8(ascii: "7")
        #expect(StoreStatus(line: String(decoding: torn.dropLast(), as: UTF8.self)) == nil)
        #expect(StoreStatus(line: String(line.prefix(40))) == nil)
        #expect(StoreStatus(line: "") == nil)
    }

    @Test func writeStatusReplacesALongerRecordAndReadOnlyHandlesWriteNothing() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.file("a.strata")
        let lock = Store.lockPath(for: path)
        let store = try Store(path: path, options: testOptions())
        // Leave a long line in the lock file: the new, shorter record must not keep its tail.
        let fs = PosixFileSystem()
        let f = try fs.open(lock, mode: .create)
        try f.write(Array(String(repeating: "x", count: 900).utf8), at: 0)
        f.close()
        store.gate.lock()
        store.writeStatus()
        store.gate.unlock()
        let f2 = try fs.open(lock, mode: .readOnly)
        let size = try f2.size()
        f2.close()
        let status = try #require(StoreStatus.read(storePath: path))
        #expect(size == UInt64(status.line.utf8.count))
        try store.close()

        var options = testOptions()
        options.readOnly = true
        let reader = try Store(path: path, options: options)
        try fs.remove(lock)
        reader.writeStatus()
        #expect(!fs.fileExists(lock))
        #expect(try reader.info().writerStatus == nil)
        try reader.close()
    }
}
