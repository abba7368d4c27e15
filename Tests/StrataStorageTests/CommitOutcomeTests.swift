import Testing
@testable import StrataStorage

/// What follows a commit never pretends the commit failed: a checkpoint that fails after it is
/// counted, kept and retried (not swallowed), and a strict check that finds damage says the
/// commit stands.
@Suite struct CommitOutcomeTests {
    /// An automatic checkpoint that fails (an I/O error on its first page write) leaves the
    /// commit that ran it committed; the failure is counted and kept in the statistics, later
    /// commits retry (backing off), and a success clears the error.
    @Test func failedAutomaticCheckpointIsCountedAndRetried() throws {
        var o = relOptions(SimulatedFileSystem())
        let fs = o.fileSystem as! SimulatedFileSystem
        o.checkpointLogBytes = 1  // every commit checkpoints
        let store = try Store(path: relPath, options: o)
        try store.write { try $0.createTree("t").put(key(0), key(0)) }
        #expect(store.statistics.checkpoints == 1 && store.statistics.checkpointFailures == 0)
        // Writes of one commit that checkpoints: the commit frame first, then the checkpoint's.
        let commitWrites = try CommitOutcomeTests.writesOfOneCommitFrame(o)
        fs.failAt(.write, callIndex: fs.count(of: .write) + commitWrites + 1)
        try store.write { try $0.tree("t")!.put(key(1), key(1)) }
        var s = store.statistics
        #expect(s.checkpointFailures == 1 && s.checkpoints == 1, "\(s)")
        guard case .ioFailure? = s.lastCheckpointError else {
            Issue.record("lastCheckpointError: \(String(describing: s.lastCheckpointError))")
            return
        }
        #expect(try store.read { try $0.tree("t")!.get(key(1)) } == key(1))
        // The next commit lets the checkpoint rest (one failure: wait one commit); the one after retries.
        try store.write { try $0.tree("t")!.put(key(2), key(2)) }
        #expect(store.statistics.checkpoints == 1)
        try store.write { try $0.tree("t")!.put(key(3), key(3)) }
        s = store.statistics
        #expect(s.checkpoints == 2 && s.checkpointFailures == 1 && s.lastCheckpointError == nil, "\(s)")
        #expect(try store.check().isClean)
        try store.close()
        let reopened = try Store(path: relPath, options: relOptions(fs))
        #expect(try relReadAll(reopened)["t"]!.count == 4)
        try reopened.close()
    }

    /// Write calls a commit of one small put makes before any checkpoint.
    static func writesOfOneCommitFrame(_ options: StoreOptions) throws -> Int {
        var o = options
        let fs = SimulatedFileSystem()
        o.fileSystem = fs
        o.checkpointLogBytes = 1 << 30
        let store = try Store(path: relPath, options: o)
        try store.write { try $0.createTree("t").put(key(0), key(0)) }
        let before = fs.count(of: .write)
        try store.write { try $0.tree("t")!.put(key(1), key(1)) }
        let n = fs.count(of: .write) - before
        try store.close()
        return n
    }

    /// With strict checks, a check that finds damage after a commit throws
    /// `strictCheckFailed`, which says the commit stands; it used to throw `corrupt`, as if the
    /// commit had failed, while the commit was published and durable.
    @Test func strictCheckFailureSaysTheCommitStands() throws {
        let fs = SimulatedFileSystem()
        var o = relOptions(fs)
        do {
            let store = try Store(path: relPath, options: o)
            try store.write { try $0.createTree("t").put(key(0), bytes("first")) }
            try store.checkpoint()
            try store.close()
        }
        // Damage the first commit frame: garbage since the checkpoint, so recovery never reads
        // it, but the check verifies every frame.
        var image = try #require(fs.contents(of: relPath))
        var at = Int(Format.logStart)
        while true {
            let header = try #require(image.withUnsafeBytes {
                FrameHeader.decode(UnsafeRawBufferPointer(rebasing: $0[at..<at + Format.frameHeaderLength]), at: UInt64(at))
            })
            if header.type == .commit { break }
            at += Int(header.frameLength)
        }
        image[at + Format.frameHeaderLength] ^= 1
        fs.setContents(image, of: relPath)
        o.strictChecks = true
        let store = try Store(path: relPath, options: o)
        do {
            try store.write { try $0.tree("t")!.put(key(1), bytes("second")) }
            Issue.record("the strict check found nothing")
        } catch StrataError.strictCheckFailed(let txid, let problems) {
            #expect(txid == 2 && !problems.isEmpty)
        }
        #expect(try store.read { try $0.tree("t")!.get(key(1)) } == bytes("second"))
        store.abandonForTesting()
        let reopened = try Store(path: relPath, options: relOptions(fs))
        #expect(try relReadAll(reopened)["t"]![key(1)] == bytes("second"))
        try reopened.close()
    }
}
