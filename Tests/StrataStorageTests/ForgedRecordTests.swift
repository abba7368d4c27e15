import Testing
@testable import StrataStorage
#if canImport(Glibc)
import Glibc
#endif

/// Forged commit records (FORMAT.md §5) and checkpoint records (§6): every checksum valid, one
/// limit or semantic rule broken. Each must make the open fail with `corrupt` — never a trap,
/// never a silently shorter history, never a name or a value the writer did not write.
@Suite struct ForgedRecordTests {
    /// Overflow frames written after the checkpoint, before the forged commits: a 10-byte value
    /// (too small to be an overflow value) and a 3000-byte one.
    struct OverflowFrames {
        var small: UInt64
        var large: UInt64
    }

    /// A store with tree "t" (id 1) holding two keys, checkpointed, then two overflow frames,
    /// then the commit frames `make` returns appended exactly as given (txids 2, 3, …), synced.
    static func storeWithCommits(fs: SimulatedFileSystem, _ make: (OverflowFrames) -> [[UInt8]]) throws {
        let store = try Store(path: relPath, options: relOptions(fs))
        defer { store.abandonForTesting() }
        try store.write { tx in
            let t = try tx.createTree("t")
            try t.put(bytes("a"), bytes("1"))
            try t.put(bytes("b"), bytes("2"))
        }
        try store.checkpoint()
        var txid = store.currentVersion.txid
        let small = try [UInt8](repeating: 7, count: 10).withUnsafeBytes { try store.writableLog().append(.overflow, txid: txid + 1, payload: $0, compress: false) }
        let large = try [UInt8](repeating: 8, count: 3000).withUnsafeBytes { try store.writableLog().append(.overflow, txid: txid + 1, payload: $0, compress: false) }
        for payload in make(OverflowFrames(small: small.offset, large: large.offset)) {
            txid += 1
            _ = try payload.withUnsafeBytes { try store.writableLog().append(.commit, txid: txid, payload: $0, compress: false) }
        }
        try store.writableLog().syncAll()
    }

    /// A commit record built from raw fields (the writer's API refuses what these forge),
    /// encoded by the reference codec.
    struct Record {
        var operations: [ReferenceFormat.CommitRecord.Operation] = []
        mutating func put(_ tree: UInt64, _ key: [UInt8], _ value: [UInt8]) {
            operations.append(.put(tree: tree, key: key, value: value))
        }
        mutating func putOverflow(_ tree: UInt64, _ key: [UInt8], length: UInt64, frame: UInt64) {
            operations.append(.putOverflow(tree: tree, key: key, valueLength: length, frameOffset: frame))
        }
        mutating func delete(_ tree: UInt64, _ key: [UInt8]) { operations.append(.delete(tree: tree, key: key)) }
        mutating func create(_ id: UInt64, _ name: [UInt8]) { operations.append(.createTree(id: id, name: name)) }
        mutating func drop(_ id: UInt64) { operations.append(.dropTree(id: id)) }
        var bytes: [UInt8] { ReferenceFormat.CommitRecord.encode(operations) }
    }

    static func record(_ build: (inout Record) -> Void) -> [UInt8] {
        var r = Record()
        build(&r)
        return r.bytes
    }

    /// Opens read-only and read-write; both must throw `corrupt`.
    static func expectCorrupt(_ fs: SimulatedFileSystem, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for readOnly in [true, false] {
            let copy = fs.clone()
            var o = relOptions(copy)
            o.readOnly = readOnly
            let mode = readOnly ? "read-only" : "read-write"
            do {
                let store = try Store(path: relPath, options: o)
                defer { store.abandonForTesting() }
                let content = try relReadAll(store)
                Issue.record("\(label) (\(mode)): opened, trees \(content.keys.sorted().map { Array($0.utf8) })", sourceLocation: sourceLocation)
            } catch StrataError.corrupt {
            } catch {
                Issue.record("\(label) (\(mode)): \(error), expected corrupt", sourceLocation: sourceLocation)
            }
        }
    }

    static let invalidUTF8: [[UInt8]] = [[0xFF], [0x61, 0xC3], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0x61, 0x80, 0x62], [0xF5, 0x80, 0x80, 0x80]]

    /// Forged commit records, each breaking one rule of FORMAT.md §5 or §8 step 3.
    static var commitForgeries: [(String, (OverflowFrames) -> [[UInt8]])] {
        var cases: [(String, (OverflowFrames) -> [[UInt8]])] = [
            ("put into an unknown tree", { _ in [ForgedRecordTests.record { $0.put(7, bytes("k"), bytes("v")) }] }),
            ("delete in an unknown tree", { _ in [ForgedRecordTests.record { $0.delete(7, bytes("a")) }] }),
            ("drop of an unknown tree", { _ in [ForgedRecordTests.record { $0.drop(7) }] }),
            ("drop of a tree dropped before", { _ in [ForgedRecordTests.record { $0.drop(1) }, ForgedRecordTests.record { $0.drop(1) }] }),
            ("create of an existing id", { _ in [ForgedRecordTests.record { $0.create(1, bytes("u")) }] }),
            ("create of an existing name", { _ in [ForgedRecordTests.record { $0.create(2, bytes("t")) }] }),
            ("create below the next tree id", { _ in [ForgedRecordTests.record { $0.create(2, bytes("u")) }, ForgedRecordTests.record { $0.create(2, bytes("w")) }] }),
            ("create with an empty name", { _ in [ForgedRecordTests.record { $0.create(2, []) }] }),
            ("create with a 256-byte name", { _ in [ForgedRecordTests.record { $0.create(2, [UInt8](repeating: 0x61, count: 256)) }] }),
            // (Tree id 2^32−1 trapped: `forgedIdsAndCountsDoNotTrap` runs it in a child process.)
            ("create of tree id 2^32-2 (the next tree id would be 2^32-1)", { _ in [ForgedRecordTests.record { $0.create(UInt64(UInt32.max - 1), bytes("u")) }] }),
            ("tree id 2^32", { _ in [ForgedRecordTests.record { $0.put(1 << 32, bytes("k"), bytes("v")) }] }),
            ("empty key", { _ in [ForgedRecordTests.record { $0.put(1, [], bytes("v")) }] }),
            ("1025-byte key", { _ in [ForgedRecordTests.record { $0.put(1, [UInt8](repeating: 1, count: 1025), bytes("v")) }] }),
            ("inline value too large for a leaf", { _ in [ForgedRecordTests.record { $0.put(1, bytes("k"), [UInt8](repeating: 1, count: 1100)) }] }),
            ("overflow value small enough to be inline", { o in [ForgedRecordTests.record { $0.putOverflow(1, bytes("k"), length: 10, frame: o.small) }] }),
            ("overflow reference with another length", { o in [ForgedRecordTests.record { $0.putOverflow(1, bytes("k"), length: 3001, frame: o.large) }] }),
            ("overflow reference to the checkpoint frame", { _ in
                let checkpointFrame = UInt64(ReferenceFormat.logStart)
                return [ForgedRecordTests.record {
                    $0.putOverflow(1, bytes("k"), length: 3000, frame: checkpointFrame)
                }]
            }),
            ("overflow reference inside a frame", { o in [ForgedRecordTests.record { $0.putOverflow(1, bytes("k"), length: 3000, frame: o.large + 8) }] }),
            ("overflow reference past the commit", { _ in [ForgedRecordTests.record { $0.putOverflow(1, bytes("k"), length: 3000, frame: 1 << 20) }] }),
            ("overflow reference 2^63", { _ in [ForgedRecordTests.record { $0.putOverflow(1, bytes("k"), length: 3000, frame: 1 << 63) }] }),
            ("unknown operation", { _ in [[9, 1]] }),
            ("truncated operation", { _ in [Array(ForgedRecordTests.record { $0.put(1, bytes("key"), bytes("value")) }.dropLast())] }),
        ]
        for name in ForgedRecordTests.invalidUTF8 {
            cases.append(("create with the non-UTF-8 name \(name)", { _ in [ForgedRecordTests.record { $0.create(2, name) }] }))
        }
        return cases
    }

    /// FORMAT.md §5: the semantic checks of commit records; §8 step 3: a commit whose overflow
    /// frame is missing.
    @Test func forgedCommitRecordsAreCorrupt() throws {
        // The control: the same construction with nothing broken opens with every commit.
        let control = SimulatedFileSystem()
        try ForgedRecordTests.storeWithCommits(fs: control) { o in
            [ForgedRecordTests.record { $0.putOverflow(1, bytes("k"), length: 3000, frame: o.large) }, ForgedRecordTests.record { $0.create(2, bytes("u")) }]
        }
        let opened = try Store(path: relPath, options: relOptions(control))
        #expect(try relReadAll(opened)["t"]?[bytes("k")] == [UInt8](repeating: 8, count: 3000))
        #expect(try opened.read { try $0.treeNames } == ["t", "u"])
        opened.abandonForTesting()

        for (label, make) in ForgedRecordTests.commitForgeries {
            // A valid commit after the forged one, so that nothing can pass for a torn tail.
            let fs = SimulatedFileSystem()
            try ForgedRecordTests.storeWithCommits(fs: fs) { o in make(o) + [ForgedRecordTests.record { $0.put(1, bytes("z"), bytes("9")) }] }
            ForgedRecordTests.expectCorrupt(fs, label)
        }
    }

    /// A checkpoint record built from raw fields, written with a header slot pointing at it.
    /// `make` gets the offset where the checkpoint frame will end (for its live-byte count).
    static func storeWithCheckpoint(txid: UInt64 = 1, compress: Bool = false, fs: SimulatedFileSystem,
                                    _ make: (_ frameEnd: UInt64) -> [UInt8]) throws {
        let store = try Store(path: relPath, options: relOptions(fs))
        defer { store.abandonForTesting() }
        try store.write { tx in try tx.createTree("t").put(bytes("a"), bytes("1")) }
        let start = try store.writableLog().end
        let probe = make(0)
        let payload = make(start + FrameHeader.frameLength(storedLength: probe.count))
        let frame = try payload.withUnsafeBytes { try store.writableLog().append(.checkpoint, txid: txid, payload: $0, compress: compress) }
        try store.writableLog().syncAll()
        let header = FileHeader(pageSize: 4096, sequence: store.header.sequence + 1, checkpointOffset: frame.offset,
                                durableEnd: frame.offset + frame.length, checkpointTxid: txid, fileID: store.header.fileID)
        try StoreFileWriter.writeHeader(header, slot: 1 - store.headerSlot, file: store.writableLog().file)
    }

    /// Checkpoint payload: txid, next tree id, live bytes (`nil`: the whole file up to the end
    /// of the checkpoint frame), count, then entries (empty trees), then `trailing`; encoded by
    /// the reference codec.
    static func checkpoint(_ frameEnd: UInt64, txid: UInt64 = 1, next: UInt32 = 3, live: UInt64? = nil, count: UInt32? = nil,
                           names: [[UInt8]], ids: [UInt32]? = nil, trailing: [UInt8] = []) -> [UInt8] {
        let trees = names.enumerated().map { index, name in
            ReferenceFormat.CheckpointRecord.TreeEntry(id: ids?[index] ?? UInt32(index + 1), name: name)
        }
        let record = ReferenceFormat.CheckpointRecord(txid: txid, nextTreeID: next, liveBytes: live ?? frameEnd,
                                                      trees: trees)
        return record.encoded(claimedTreeCount: count) + trailing
    }

    /// Forged checkpoint records, each breaking one rule of FORMAT.md §6.
    static var checkpointForgeries: [(String, (UInt64) -> [UInt8])] {
        var cases: [(String, (UInt64) -> [UInt8])] = [
            ("an entry count one too high", { ForgedRecordTests.checkpoint($0, count: 3, names: [bytes("t"), bytes("u")]) }),
            ("an entry count one too low", { ForgedRecordTests.checkpoint($0, count: 1, names: [bytes("t"), bytes("u")]) }),
            ("an entry count of 2^32-1", { ForgedRecordTests.checkpoint($0, count: .max, names: [bytes("t")]) }),
            ("a trailing byte", { ForgedRecordTests.checkpoint($0, names: [bytes("t")], trailing: [0]) }),
            ("eight trailing bytes", { ForgedRecordTests.checkpoint($0, names: [bytes("t")], trailing: [UInt8](repeating: 0, count: 8)) }),
            ("an empty name", { ForgedRecordTests.checkpoint($0, names: [[]]) }),
            ("a 256-byte name", { ForgedRecordTests.checkpoint($0, names: [[UInt8](repeating: 0x61, count: 256)]) }),
            ("a name listed twice", { ForgedRecordTests.checkpoint($0, names: [bytes("t"), bytes("t")]) }),
            ("an id listed twice", { ForgedRecordTests.checkpoint($0, names: [bytes("t"), bytes("u")], ids: [1, 1]) }),
            ("an id at the next tree id", { ForgedRecordTests.checkpoint($0, next: 2, names: [bytes("t"), bytes("u")]) }),
            ("next tree id 2^32-1", { ForgedRecordTests.checkpoint($0, next: .max, names: [bytes("t")]) }),
            ("live bytes past the checkpoint frame", { ForgedRecordTests.checkpoint($0, live: $0 + 8, names: [bytes("t")]) }),
            ("live bytes 2^63", { ForgedRecordTests.checkpoint($0, live: 1 << 63, names: [bytes("t")]) }),
            ("live bytes 2^64-1", { ForgedRecordTests.checkpoint($0, live: .max, names: [bytes("t")]) }),
            ("live bytes below the header", { ForgedRecordTests.checkpoint($0, live: 100, names: [bytes("t")]) }),
        ]
        for name in ForgedRecordTests.invalidUTF8 {
            cases.append(("the non-UTF-8 name \(name)", { ForgedRecordTests.checkpoint($0, names: [name]) }))
        }
        return cases
    }

    /// A checkpoint frame with the compressed flag (names long enough for LZ4 to pay).
    static func storeWithCompressedCheckpoint(fs: SimulatedFileSystem) throws {
        let names = (0..<8).map { [UInt8](repeating: 0x61, count: 100) + [UInt8(ascii: "0") + UInt8($0)] }
        try ForgedRecordTests.storeWithCheckpoint(compress: true, fs: fs) { ForgedRecordTests.checkpoint($0, next: 10, names: names) }
    }

    /// FORMAT.md §6: a checkpoint's entry count, trailing bytes, names, ids, live bytes; §3: a
    /// checkpoint frame is never compressed.
    @Test func forgedCheckpointRecordsAreCorrupt() throws {
        // The control: a forged checkpoint that breaks nothing opens.
        let control = SimulatedFileSystem()
        try ForgedRecordTests.storeWithCheckpoint(fs: control) { ForgedRecordTests.checkpoint($0, names: [bytes("t"), bytes("u")]) }
        let opened = try Store(path: relPath, options: relOptions(control))
        #expect(try opened.read { try $0.treeNames } == ["t", "u"])
        opened.abandonForTesting()

        for (label, make) in ForgedRecordTests.checkpointForgeries {
            let fs = SimulatedFileSystem()
            try ForgedRecordTests.storeWithCheckpoint(fs: fs, make)
            ForgedRecordTests.expectCorrupt(fs, "checkpoint with \(label)")
        }
        // A compressed checkpoint frame.
        let fs = SimulatedFileSystem()
        try ForgedRecordTests.storeWithCompressedCheckpoint(fs: fs)
        let image = try #require(fs.contents(of: relPath))
        let compressed = stride(from: ReferenceFormat.logStart, to: image.count - ReferenceFormat.frameHeaderLength,
                                by: ReferenceFormat.frameAlignment).contains {
            let header = ReferenceFormat.FrameHeader(fieldsIn: image, at: $0)
            return header.type == .checkpoint && header.isCompressed && header.magic == ReferenceFormat.frameMagic
        }
        #expect(compressed, "the forged checkpoint frame is compressed")
        ForgedRecordTests.expectCorrupt(fs, "a compressed checkpoint frame")
    }

    /// Values a file supplies that fed arithmetic and trapped: a tree id of 2^32−1 (`id + 1`),
    /// live bytes ≥ 2^63 (`Int64(…)` in the space accounting). In a child process.
    @Test func forgedIdsAndCountsDoNotTrap() async {
        await #expect(processExitsWith: .success, "tree id 2^32-1, next tree id 2^32-1, live bytes 2^63") {
            func openWriteAndReport(_ fs: SimulatedFileSystem) {
                do {
                    let store = try Store(path: relPath, options: relOptions(fs))
                    _ = try store.info()
                    try store.write { tx in try tx.treeCreatingIfMissing("new").put([1], [2]) }
                    try store.checkpoint()
                    _ = try store.check()
                    store.abandonForTesting()
                } catch is StrataError {
                } catch {
                    exit(3)
                }
            }
            let a = SimulatedFileSystem()
            try ForgedRecordTests.storeWithCommits(fs: a) { _ in [ForgedRecordTests.record { $0.create(UInt64(UInt32.max), bytes("u")) }] }
            openWriteAndReport(a)
            let b = SimulatedFileSystem()
            try ForgedRecordTests.storeWithCheckpoint(fs: b) { ForgedRecordTests.checkpoint($0, next: .max, names: [bytes("t")]) }
            openWriteAndReport(b)
            let c = SimulatedFileSystem()
            try ForgedRecordTests.storeWithCheckpoint(fs: c) { ForgedRecordTests.checkpoint($0, live: 1 << 63, names: [bytes("t")]) }
            openWriteAndReport(c)
        }
    }
}
