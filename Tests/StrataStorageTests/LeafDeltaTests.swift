import Testing
@testable import StrataStorage

/// Leaves stored as leaf deltas (FORMAT.md §4, "Leaf deltas"): a checkpoint after scattered
/// changes writes each changed leaf as its changed cells against its last image, and every
/// reader — reopen, point reads, cursors, `check`, compaction, backup — reads the leaf those
/// frames make.
@Suite struct LeafDeltaTests {
    typealias Model = [[UInt8]: [UInt8]]

    /// The frames of the store's file from the log's start to its end: (offset, type).
    static func frames(_ fs: SimulatedFileSystem, _ path: String = relPath) throws -> [(offset: UInt64, type: FrameType)] {
        let bytes = try #require(fs.contents(of: path))
        let scan = SimulatedFileSystem()
        scan.setContents(bytes, of: "/scan")
        let reader = FrameReader(file: try scan.open("/scan", mode: .readOnly))
        var out: [(offset: UInt64, type: FrameType)] = []
        var offset = Format.logStart
        while let header = try reader.header(at: offset, limit: UInt64(bytes.count)) {
            out.append((offset, header.type))
            offset += header.frameLength
        }
        return out
    }

    static func deltaCount(_ fs: SimulatedFileSystem, _ path: String = relPath) throws -> Int {
        try frames(fs, path).filter { $0.type == .leafDelta }.count
    }

    static func value(_ i: Int, _ round: Int) -> [UInt8] { bytes("value \(i) of round \(round) ....") }

    /// A store of `count` keys in tree "t", checkpointed (every leaf written whole).
    static func makeStore(_ fs: SimulatedFileSystem, count: Int) throws -> (Store, Model) {
        let store = try Store(path: relPath, options: relOptions(fs))
        var model: Model = [:]
        try store.write { tx in
            let t = try tx.treeCreatingIfMissing("t")
            for i in 0..<count {
                try t.put(key(i), value(i, 0))
                model[key(i)] = value(i, 0)
            }
        }
        try store.checkpoint()
        return (store, model)
    }

    /// Puts `value(i, round)` under every key `i` of `keys` in one transaction, and into `model`.
    static func rewrite(_ store: Store, _ keys: StrideTo<Int>, round: Int, _ model: inout Model) throws {
        var changed = model
        try store.write { tx in
            let t = try #require(try tx.tree("t"))
            for i in keys {
                try t.put(key(i), value(i, round))
                changed[key(i)] = value(i, round)
            }
        }
        model = changed
    }

    /// Expects a clean check, the model through point reads and a full walk, and the same after
    /// a reopen.
    static func expectHolds(_ store: Store, _ model: Model, _ context: String, pointReads: Bool = true) throws {
        let report = try store.check()
        #expect(report.isClean, "\(context): \(report.problems)")
        if pointReads { try expectTrees(of: store, hold: ["t": model], context) }
        try store.read { tx in
            let t = try #require(try tx.tree("t"))
            var walked: [([UInt8], [UInt8])] = []
            let cursor = t.makeCursor()
            var more = try cursor.first()
            while more {
                walked.append((cursor.copyKey(), try cursor.copyValue()))
                more = try cursor.next()
            }
            let expected = model.sorted { $0.key.lexicographicallyPrecedes($1.key) }
            #expect(walked.map(\.0) == expected.map(\.key), "\(context): walk keys")
            #expect(walked.map(\.1) == expected.map(\.value), "\(context): walk values")
        }
    }

    /// ``expectHolds(_:_:_:pointReads:)``, then the same after closing and reopening with
    /// `options`; closes the reopened store.
    static func expectHoldsAcrossReopen(_ store: Store, _ model: Model, _ context: String,
                                        options: StoreOptions) throws {
        try expectHolds(store, model, context)
        try store.close()
        let reopened = try Store(path: relPath, options: options)
        try expectHolds(reopened, model, context + ", reopened")
        try reopened.close()
    }

    @Test func scatteredUpdatesAreWrittenAsDeltasAndReadBack() throws {
        let fs = SimulatedFileSystem()
        var (store, model) = try Self.makeStore(fs, count: 3000)
        #expect(try Self.deltaCount(fs) == 0)
        // One key in ten, same length: a few cells in every leaf.
        try Self.rewrite(store, stride(from: 3, to: 3000, by: 10), round: 1, &model)
        try store.checkpoint()
        let deltas = try Self.deltaCount(fs)
        #expect(deltas > 10, "a checkpoint after scattered updates writes deltas (\(deltas))")
        try Self.expectHoldsAcrossReopen(store, model, "after the checkpoint", options: relOptions(fs))
    }

    /// The changes of all the deltas in the file: the sum of their change counts.
    static func deltaChanges(_ fs: SimulatedFileSystem) throws -> Int {
        let bytes = try #require(fs.contents(of: relPath))
        let scan = SimulatedFileSystem()
        scan.setContents(bytes, of: "/scan")
        let reader = FrameReader(file: try scan.open("/scan", mode: .readOnly))
        var total = 0
        for frame in try frames(fs) where frame.type == .leafDelta {
            let (_, payload) = try reader.read(at: frame.offset, expecting: .leafDelta, maxRawLength: 1 << 16)
            total += Int(payload[8]) | Int(payload[9]) << 8
        }
        return total
    }

    /// The keys every delta in the file changes (puts and deletes).
    static func deltaKeys(_ fs: SimulatedFileSystem) throws -> [[UInt8]] {
        let bytes = try #require(fs.contents(of: relPath))
        let scan = SimulatedFileSystem()
        scan.setContents(bytes, of: "/scan")
        let reader = FrameReader(file: try scan.open("/scan", mode: .readOnly))
        var keys: [[UInt8]] = []
        for frame in try frames(fs) where frame.type == .leafDelta {
            let (_, payload) = try reader.read(at: frame.offset, expecting: .leafDelta, maxRawLength: 1 << 16)
            var at = 10
            for _ in 0..<(Int(payload[8]) | Int(payload[9]) << 8) {
                let put = payload[at] == Format.deltaPut
                let keyLength = Int(payload[at + 1]) | Int(payload[at + 2]) << 8
                var valueLength = 0
                at += 3
                if put {
                    let info = UInt32(payload[at]) | UInt32(payload[at + 1]) << 8 | UInt32(payload[at + 2]) << 16
                        | UInt32(payload[at + 3]) << 24
                    valueLength = info & Format.overflowBit != 0 ? Format.overflowReferenceLength : Int(info)
                    at += 4
                }
                keys.append(Array(payload[at..<(at + keyLength)]))
                at += keyLength + valueLength
            }
        }
        return keys
    }

    /// Leaves changed by a committed transaction, then by one that fails, then by another
    /// committed one: the checkpoint's deltas hold the committed changes alone (the keys a
    /// leaf's versions share in one log; the failed transaction's are dropped by the next
    /// change), and the store reads back as committed.
    @Test func aFailedTransactionsKeysAreNotInTheNextDelta() throws {
        let fs = SimulatedFileSystem()
        var (store, model) = try Self.makeStore(fs, count: 600)
        try Self.rewrite(store, stride(from: 0, to: 600, by: 50), round: 1, &model)
        struct Abandon: Error {}
        #expect(throws: Abandon.self) {
            try store.write { tx in
                let t = try #require(try tx.tree("t"))
                for i in stride(from: 5, to: 600, by: 50) { try t.put(key(i), Self.value(i, 9)) }
                throw Abandon()
            }
        }
        try Self.rewrite(store, stride(from: 10, to: 600, by: 50), round: 2, &model)
        try store.checkpoint()
        #expect(try Self.deltaCount(fs) > 0)
        let committed = Set((Array(stride(from: 0, to: 600, by: 50)) + Array(stride(from: 10, to: 600, by: 50))).map { key($0) })
        #expect(Set(try Self.deltaKeys(fs)) == committed, "the keys of the committed transactions, and only those")
        #expect(try Self.deltaChanges(fs) == 24, "12 keys of each committed transaction")
        try Self.expectHoldsAcrossReopen(store, model, "after the checkpoint", options: relOptions(fs))
    }

    /// Rounds of random puts (new keys, new lengths), deletes and checkpoints: deltas of deltas'
    /// leaves, leaves that split or merge, deltas that grow past a quarter page and are written
    /// whole again. After every round the store holds the model, through reads, a reopen and
    /// `check` (whose space accounting counts each delta's base).
    @Test(arguments: [UInt64(1), 2, 3])
    func randomRoundsHoldTheModel(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let fs = SimulatedFileSystem()
        var (store, model) = try Self.makeStore(fs, count: 2000)
        var sawDeltas = false
        for round in 1...8 {
            let changes = [5, 40, 300][rng.below(3)]
            try store.write { tx in
                let t = try #require(try tx.tree("t"))
                for _ in 0..<changes {
                    let i = rng.below(2400)
                    switch rng.below(4) {
                    case 0:
                        if try t.delete(key(i)) { model[key(i)] = nil }
                    case 1:
                        // Now and then a value past a quarter page: an overflow cell in a delta.
                        let length = rng.below(8) == 0 ? 1_500 + rng.below(500) : rng.below(200)
                        let long = [UInt8](repeating: UInt8(round), count: length)
                        try t.put(key(i), long)
                        model[key(i)] = long
                    default:
                        try t.put(key(i), Self.value(i, round))
                        model[key(i)] = Self.value(i, round)
                    }
                }
            }
            try store.checkpoint()
            if try Self.deltaCount(fs) > 0 { sawDeltas = true }
            try Self.expectHolds(store, model, "seed \(seed) round \(round)")
            if round % 3 == 0 {
                try store.close()
                store = try Store(path: relPath, options: relOptions(fs))
                try Self.expectHolds(store, model, "seed \(seed) round \(round), reopened")
            }
        }
        #expect(sawDeltas, "seed \(seed): no round wrote a delta")
        try store.close()
    }

    /// Compaction and backup write every leaf whole: their files hold no delta, and read as the
    /// store did.
    @Test func compactionAndBackupWriteNoDeltas() throws {
        let fs = SimulatedFileSystem()
        var (store, model) = try Self.makeStore(fs, count: 3000)
        try store.write { tx in
            let t = try #require(try tx.tree("t"))
            for i in stride(from: 7, to: 3000, by: 10) {
                try t.put(key(i), Self.value(i, 1))
                model[key(i)] = Self.value(i, 1)
            }
            for i in stride(from: 1, to: 3000, by: 50) {
                _ = try t.delete(key(i))
                model[key(i)] = nil
            }
        }
        try store.checkpoint()
        #expect(try Self.deltaCount(fs) > 0)
        let backup = relPath + ".backup"
        _ = try store.backup(to: backup)
        #expect(try Self.deltaCount(fs, backup) == 0)
        try store.compact()
        #expect(try Self.deltaCount(fs) == 0)
        try Self.expectHolds(store, model, "compacted")
        try store.close()
        for path in [relPath, backup] {
            let reopened = try Store(path: path, options: relOptions(fs))
            #expect(try reopened.check().isClean, "\(path)")
            try expectTrees(of: reopened, hold: ["t": model], path)
            try reopened.close()
        }
    }

    /// A version-1 file (the format before deltas) opens, and gets no delta until a header slot
    /// says version 2: its first checkpoint writes leaves whole and the new version, the next may
    /// write deltas.
    @Test func aVersionOneFileIsUpgradedBeforeItHoldsADelta() throws {
        let fs = SimulatedFileSystem()
        var (store, model) = try Self.makeStore(fs, count: 3000)
        try store.close()
        // Both header slots rewritten to say version 1 (with their checksums).
        var file = try #require(fs.contents(of: relPath))
        for slot in [0, Format.slotSize] where file[slot..<(slot + 8)].contains(where: { $0 != 0 }) {
            file[slot + 8] = 1
            let crc = file.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[slot..<(slot + 60)])) }
            for b in 0..<4 { file[slot + 60 + b] = UInt8(truncatingIfNeeded: crc >> (8 * b)) }
        }
        fs.setContents(file, of: relPath)
        store = try Store(path: relPath, options: relOptions(fs))
        #expect(try store.info().formatVersion == 1)
        func scatter(_ round: Int) throws {
            try Self.rewrite(store, stride(from: round, to: 3000, by: 10), round: round, &model)
            try store.checkpoint()
        }
        try scatter(1)
        #expect(try Self.deltaCount(fs) == 0, "no delta into a version-1 file")
        #expect(try store.info().formatVersion == 2)
        try scatter(2)
        #expect(try Self.deltaCount(fs) > 0)
        try Self.expectHolds(store, model, "upgraded")
        try store.close()
    }

    /// A delta frame forged to break one rule (every checksum valid) is `corrupt` for every
    /// reader, never another error, a trap or wrong data.
    @Test(arguments: DeltaForgery.allCases)
    func forgedDeltasAreCorrupt(_ forgery: DeltaForgery) throws {
        let fs = SimulatedFileSystem()
        let (store, _) = try Self.makeStore(fs, count: 3000)
        try store.write { tx in
            let t = try #require(try tx.tree("t"))
            for i in stride(from: 3, to: 3000, by: 10) { try t.put(key(i), Self.value(i, 1)) }
        }
        try store.checkpoint()
        store.abandonForTesting()
        let frames = try Self.frames(fs)
        let deltas = frames.filter { $0.type == .leafDelta }
        let target = try #require(deltas.dropFirst(deltas.count / 2).first)
        var file = try #require(fs.contents(of: relPath))
        let headerAt = Int(target.offset)
        let payloadAt = headerAt + Format.frameHeaderLength
        let storedLength = Int(file[headerAt + 8]) | Int(file[headerAt + 9]) << 8 | Int(file[headerAt + 10]) << 16
        var payload = Array(file[payloadAt..<(payloadAt + storedLength)])
        func setU64(_ value: UInt64, at: Int) {
            for b in 0..<8 { payload[at + b] = UInt8(truncatingIfNeeded: value >> (8 * b)) }
        }
        switch forgery {
        case .baseIsACommitFrame:
            setU64(try #require(frames.first { $0.type == .commit }).offset, at: 0)
        case .baseIsABranch:
            // The last page frame before the first delta of the first checkpoint is a branch.
            let branch = try #require(frames.last { $0.type == .page && $0.offset < deltas[0].offset })
            setU64(branch.offset, at: 0)
        case .baseIsAnotherDelta:
            setU64(deltas[0].offset, at: 0)
        case .baseIsItself:
            setU64(target.offset, at: 0)
        case .baseIsUnaligned:
            setU64((payload.prefix(8).enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * $1.offset) }) + 4, at: 0)
        case .noChanges:
            payload[8] = 0
            payload[9] = 0
        case .unknownOp:
            payload[10] = 7
        case .tooManyChanges:
            payload[8] = payload[8] &+ 1
        case .tooFewChanges:
            // The last change is left after the count: bytes after the last change.
            try #require(payload[8] >= 2 || payload[9] > 0)
            payload[8] = payload[8] &- 1
            if payload[8] == 0xFF { payload[9] &-= 1 }
        case .repeatedKey:
            // The second change's key made the first's (the keys are all one length): keys not
            // strictly ascending.
            func keyAndEnd(at: Int) -> (key: Range<Int>, end: Int) {
                let keyLength = Int(payload[at + 1]) | Int(payload[at + 2]) << 8
                let put = payload[at] == Format.deltaPut
                let info = put ? Int(payload[at + 3]) | Int(payload[at + 4]) << 8 | Int(payload[at + 5]) << 16 : 0
                let keyStart = at + 3 + (put ? 4 : 0)
                return (keyStart..<(keyStart + keyLength), keyStart + keyLength + (put ? info : 0))
            }
            let first = keyAndEnd(at: 10)
            let second = keyAndEnd(at: first.end)
            try #require(first.key.count == second.key.count)
            payload.replaceSubrange(second.key, with: Array(payload[first.key]))
        }
        // The frame rewritten in place, its checksums valid (same length: nothing moves).
        let crc = payload.withUnsafeBytes { CRC32C.checksum($0) }
        file.replaceSubrange(payloadAt..<(payloadAt + storedLength), with: payload)
        for b in 0..<4 { file[headerAt + 32 + b] = UInt8(truncatingIfNeeded: crc >> (8 * b)) }
        let headerCRC = file.withUnsafeBytes {
            FrameHeader.headerChecksum(UnsafeRawBufferPointer(rebasing: $0[headerAt..<(headerAt + 40)]), at: target.offset)
        }
        for b in 0..<4 { file[headerAt + 36 + b] = UInt8(truncatingIfNeeded: headerCRC >> (8 * b)) }
        fs.setContents(file, of: relPath)

        func expectCorrupt(_ what: String, _ body: () throws -> Void) {
            do {
                try body()
                Issue.record("\(forgery): \(what) read a forged delta")
            } catch let error as StrataError {
                guard case .corrupt = error else {
                    Issue.record("\(forgery): \(what) failed with \(error), not corrupt")
                    return
                }
            } catch {
                Issue.record("\(forgery): \(what) failed with \(error)")
            }
        }
        var options = relOptions(fs)
        options.readOnly = true
        let reopened = try Store(path: relPath, options: options)
        defer { try? reopened.close() }
        expectCorrupt("a full walk") {
            try reopened.read { tx in
                let cursor = try #require(try tx.tree("t")).makeCursor()
                var more = try cursor.first()
                while more { more = try cursor.next() }
            }
        }
        let report = try reopened.check()
        #expect(!report.isClean, "\(forgery): check found nothing")
    }

    /// A store of 5,000 keys with 200-byte values (over 256 leaves), checkpointed, then one key
    /// in ten rewritten: a checkpoint now writes a few hundred deltas, over several gathered
    /// writes.
    static func scatteredStore(_ fs: SimulatedFileSystem, _ options: StoreOptions) throws -> (Store, Model) {
        func long(_ i: Int, _ round: Int) -> [UInt8] { value(i, round) + [UInt8](repeating: UInt8(round), count: 170) }
        let store = try Store(path: relPath, options: options)
        var model: Model = [:]
        try store.write { tx in
            let t = try tx.treeCreatingIfMissing("t")
            for i in 0..<5_000 {
                try t.put(key(i), long(i, 0))
                model[key(i)] = long(i, 0)
            }
        }
        try store.checkpoint()
        try store.write { tx in
            let t = try #require(try tx.tree("t"))
            for i in stride(from: 5, to: 5_000, by: 10) {
                try t.put(key(i), long(i, 1))
                model[key(i)] = long(i, 1)
            }
        }
        return (store, model)
    }

    /// A checkpoint of deltas whose gathered writes fail, at each write it makes (an I/O error,
    /// or a short write that left whole frames in the file): the checkpoint fails, the store
    /// goes on, and the next checkpoint writes a store that reads back, checks clean (its space
    /// accounting included) and reopens. No page, cache entry or branch cell keeps the offset of
    /// a frame the failed write took back.
    @Test func aFailedWriteOfGatheredFramesLosesNothing() throws {
        // The file once: its scattered commit is replayed by each open, its leaves dirty again.
        let source = SimulatedFileSystem()
        let (built, builtModel) = try Self.scatteredStore(source, relOptions(source))
        built.abandonForTesting()
        let file = try #require(source.contents(of: relPath))
        func reopened(_ options: (SimulatedFileSystem) -> StoreOptions) throws -> (Store, SimulatedFileSystem) {
            let fs = SimulatedFileSystem()
            fs.setContents(file, of: relPath)
            return (try Store(path: relPath, options: options(fs)), fs)
        }
        let (probe, probeFS) = try reopened { relOptions($0) }
        let before = probeFS.count(of: .write)
        try probe.checkpoint()
        let writes = probeFS.count(of: .write) - before
        #expect(try Self.deltaCount(probeFS) > 256, "the checkpoint writes its deltas in more than one batch")
        try probe.close()
        for fault in [SimulatedFileSystem.Fault.ioError, .shortWrite(bytes: 8192)] {
            // Every write is counted (the lock file's status writes too); only the store file's
            // fail, and only their failures are the checkpoint's.
            var failedCheckpoints = 0
            for k in 1...writes {
                let strict: (SimulatedFileSystem) -> StoreOptions = {
                    var options = relOptions($0)
                    options.strictChecks = true
                    return options
                }
                var (store, fs) = try reopened(strict)
                var model = builtModel
                fs.failAt(.write, callIndex: fs.count(of: .write) + k, fault: fault, pathSuffix: ".strata")
                do {
                    try store.checkpoint()
                    // The fault missed the checkpoint (a short write that fit): nothing to see.
                    try store.close()
                    continue
                } catch is StrataError {
                    failedCheckpoints += 1
                }
                fs.clearFaults()
                try store.write { tx in
                    let t = try #require(try tx.tree("t"))
                    for i in stride(from: 7, to: 5_000, by: 50) {
                        try t.put(key(i), Self.value(i, 2))
                        model[key(i)] = Self.value(i, 2)
                    }
                }
                try store.checkpoint()
                try Self.expectHolds(store, model, "\(fault) at write \(k)", pointReads: false)
                try store.close()
                store = try Store(path: relPath, options: strict(fs))
                try Self.expectHolds(store, model, "\(fault) at write \(k), reopened", pointReads: false)
                try store.close()
            }
            // The frames' writes, the checkpoint frame's and the header slot's all fail it.
            #expect(failedCheckpoints >= 3, "\(fault): \(failedCheckpoints) of \(writes) writes failed the checkpoint")
            print("LeafDeltaTests \(fault): \(failedCheckpoints) of \(writes) writes failed the checkpoint")
        }
    }

    /// Checkpoints spread over commits (a few pages a step) write deltas step by step; the
    /// store holds the model through every step, with strict checks on, and after a reopen.
    @Test func incrementalCheckpointsWriteDeltas() throws {
        let seed: UInt64 = 20_261_130
        var rng = SeededRandom(seed: seed)
        let fs = SimulatedFileSystem()
        var options = relOptions(fs)
        options.checkpointDirtyBytes = 64 << 10
        options.checkpointStepPages = 8
        options.strictChecks = true
        var (store, model) = try Self.makeStore(fs, count: 20_000)
        try store.close()
        store = try Store(path: relPath, options: options)
        for round in 1...40 {
            try store.write { tx in
                let t = try #require(try tx.tree("t"))
                for _ in 0..<25 {
                    let i = rng.below(20_000)
                    try t.put(key(i), Self.value(i, round))
                    model[key(i)] = Self.value(i, round)
                }
            }
        }
        #expect(store.statistics.checkpoints > 0, "seed \(seed): no automatic checkpoint ran")
        #expect(try Self.deltaCount(fs) > 0, "seed \(seed): no delta written")
        try Self.expectHoldsAcrossReopen(store, model, "seed \(seed)", options: options)
    }

    /// A value replaced through a write cursor (in place, no search) is a change the delta holds.
    @Test func aCursorReplacementIsInTheDelta() throws {
        let fs = SimulatedFileSystem()
        var (store, model) = try Self.makeStore(fs, count: 3000)
        try store.write { tx in
            let t = try #require(try tx.tree("t"))
            let cursor = t.makeCursor()
            for i in stride(from: 11, to: 3000, by: 40) {
                #expect(try cursor.seek(key(i)))
                let v = Self.value(i, 9)
                try v.withUnsafeBytes { try t.replaceValue(at: cursor, with: $0) }
                model[key(i)] = v
            }
        }
        try store.checkpoint()
        #expect(try Self.deltaCount(fs) > 0)
        try Self.expectHoldsAcrossReopen(store, model, "replaced through a cursor", options: relOptions(fs))
    }

    /// Dirty leaves lost to a crash are rebuilt by replaying the log; the checkpoint after the
    /// reopen writes them as deltas of the images the crash left, and the store reads back.
    @Test func deltasAfterACrashAreOfTheReplayedLeaves() throws {
        let fs = SimulatedFileSystem()
        var (store, model) = try Self.makeStore(fs, count: 3000)
        try Self.rewrite(store, stride(from: 2, to: 3000, by: 10), round: 1, &model)
        store.abandonForTesting()
        store = try Store(path: relPath, options: relOptions(fs))
        try store.checkpoint()
        #expect(try Self.deltaCount(fs) > 0)
        try Self.expectHoldsAcrossReopen(store, model, "after the crash", options: relOptions(fs))
    }

    enum DeltaForgery: CaseIterable, Sendable {
        case baseIsACommitFrame, baseIsABranch, baseIsAnotherDelta, baseIsItself, baseIsUnaligned
        case noChanges, unknownOp, tooManyChanges, tooFewChanges, repeatedKey
    }
}
