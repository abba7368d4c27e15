import ArgumentParser
import StrataStorage
import StrataTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - The seed store

struct FuzzFixture {
    typealias Frame = StoreSurgery.Frame

    static let path = "/db/store.strata"
    var bytes: [UInt8] = []
    var logEnd = 0
    var checkpointOffset = 0
    var checkpointEnd = 0
    var frames: [Frame] = []
    /// End offsets of the commit frames after the checkpoint.
    var commitEnds: [Int] = []
    /// Where the frames of the last commit begin: damage from here on may read as a torn tail.
    var lastCommitRegion = 0
    /// `states[k]`: content after the checkpoint plus its first `k` later commits.
    var states: [ContentDigest] = []
    var full: Int { states.count - 1 }
    /// The frame map, with every reachable page decompressed (for forging inside pages).
    var surgery: StoreSurgery?
    /// The record cases' seed store (``RecordsFuzzCase``).
    var records = RecordsImage(trees: [])

    static func options(_ fs: any FileSystem) -> StoreOptions {
        var options = StoreOptions(durability: .full)
        options.fileSystem = fs
        options.syncIntervalMilliseconds = 3_600_000
        options.compactOnCloseGarbageRatio = 1
        options.checkpointLogBytes = 1 << 30
        options.checkpointDirtyBytes = 1 << 30
        options.cacheBytes = 1 << 20
        return options
    }

    /// Several trees, a few thousand keys, overflow values; a checkpoint; a few hundred keys of
    /// one tree changed and a second checkpoint (which writes a leaf changed in a few cells as a
    /// leaf delta, FORMAT.md §4, so the forgeries reach delta frames); eight commits after it (a
    /// tree created, an overflow value in the last); the file as a crash leaves it.
    static func build(seed: UInt64) throws -> FuzzFixture {
        let fs = SimulatedFileSystem()
        var rng = SplitMix64(seed: mixSeed(seed, 0x4649_5854))
        var fixture = FuzzFixture()
        do {
            let store = try Store(path: path, options: options(fs))
            try store.write { tx in
                let users = try tx.createTree("users")
                let orders = try tx.createTree("orders")
                let blobs = try tx.createTree("blobs")
                for i in 0..<1500 { try users.put(CrashWorkload.key(i), rng.bytes(rng.int(10...120))) }
                for i in 0..<1000 { try orders.put(Array("order-\(i * 7)".utf8), Array("amount \(i)".utf8)) }
                for i in 0..<16 {
                    let length = rng.int(2_000...8_000)
                    try blobs.put(CrashWorkload.key(i),
                                  i % 2 == 0 ? rng.bytes(length) : [UInt8](repeating: UInt8(i), count: length))
                }
            }
            try store.checkpoint()
            for round in 0..<4 {
                try store.write { tx in
                    let users = try tx.tree("users")!
                    for _ in 0..<100 {
                        try users.put(CrashWorkload.key(rng.below(1500)), Array("updated \(round)".utf8))
                    }
                    for _ in 0..<30 { _ = try users.delete(CrashWorkload.key(rng.below(1500))) }
                }
            }
            try store.checkpoint()
            fixture.states.append(try store.read { try digestContent($0, thorough: true) })
            for commit in 0..<8 {
                try store.write { tx in
                    if commit == 3 { try tx.createTree("late").put(Array("x".utf8), Array("y".utf8)) }
                    let orders = try tx.tree("orders")!
                    for _ in 0..<5 {
                        try orders.put(Array("order-\(rng.below(9000))".utf8), Array("c\(commit)".utf8))
                    }
                    _ = try tx.tree("users")!.delete(CrashWorkload.key(rng.below(1500)))
                    if commit == 7 { try tx.tree("blobs")!.put(Array("last".utf8), rng.bytes(5_000)) }
                }
                fixture.states.append(try store.read { try digestContent($0, thorough: true) })
            }
            // The file as it is now, before close: commits after the checkpoint, then
            // preallocated zeros. The store is dropped without closing (its I/O stops here).
            fixture.bytes = fs.contents(of: path) ?? []
            fs.crashAfter(operations: 0)
            withExtendedLifetime(store) {}
        }
        try fixture.mapFrames()
        // Keep the log and 4 KiB of the zeros after it.
        fixture.bytes = Array(fixture.bytes.prefix(fixture.logEnd)) + [UInt8](repeating: 0, count: 4096)
        try fixture.mapFrames()
        try fixture.checkSurgery()
        fixture.records = try RecordsWorkload.seedImage(seed: mixSeed(seed, 0x5245_4353),
                                                        minimumObjects: RecordsWorkload.seedObjects)
        try fixture.checkRecordsSeed()
        return fixture
    }

    /// Finds the current header slot's checkpoint, every frame of the log and every page.
    mutating func mapFrames() throws {
        let map = try StoreSurgery(bytes)
        surgery = map
        frames = map.frames
        checkpointOffset = map.checkpointOffset
        checkpointEnd = map.checkpointEnd
        logEnd = map.logEnd
        commitEnds = frames.filter { $0.type == .commit && $0.offset > checkpointOffset }.map(\.end)
        guard commitEnds.count == states.count - 1, commitEnds.count >= 2 else {
            throw ToolError("seed store: unexpected frame map "
                               + "(\(frames.count) frames, \(commitEnds.count) commits after the checkpoint)")
        }
        lastCommitRegion = commitEnds[commitEnds.count - 2]
    }

    /// The page surgery must be invisible when it forges nothing: every reachable page (a
    /// leaf delta's base included) rewritten as itself, every leaf delta rewritten whole as
    /// the leaf it reads as and as itself, reads back as the same store, and `check()` finds
    /// nothing.
    func checkSurgery() throws {
        guard let surgery else { throw ToolError("seed store: no frame map") }
        func expectUnchanged(_ rewritten: StoreSurgery, _ what: String) throws {
            let outcome = FuzzCase.examine(rewritten.bytes, readOnly: true, layer: .simulated, fixture: self)
            guard case .read(let index, let problems) = outcome, index == full, problems.isEmpty else {
                throw ToolError("seed store: \(what) reads as \(outcome)")
            }
        }
        for offset in surgery.pageImages.keys.sorted() {
            var rewritten = surgery
            try rewritten.replacePage(at: offset, with: surgery.pageImages[offset]!)
            try expectUnchanged(rewritten, surgery.deltaPayloads[offset] == nil
                                    ? "the page at \(offset) rewritten as itself"
                                    : "the leaf delta at \(offset) rewritten whole")
        }
        for offset in surgery.deltaPayloads.keys.sorted() {
            var rewritten = surgery
            try rewritten.replaceDelta(at: offset, with: surgery.deltaPayloads[offset]!)
            try expectUnchanged(rewritten, "the leaf delta at \(offset) rewritten as itself")
        }
    }

    /// The record oracle must pass the undamaged record seed store, however it is placed,
    /// read-only and read-write: anything it reported there would be a false alarm.
    func checkRecordsSeed() throws {
        let model = try todoModel()
        for placement in RecordsImage.Placement.allCases {
            var image = records
            image.placement = placement
            let bytes = try image.storeBytes()
            for readOnly in [true, false] {
                let fs = SimulatedFileSystem()
                fs.setContents(bytes, of: RecordsImage.path)
                var options = RecordsImage.options(fs)
                options.readOnly = readOnly
                let outcome = RecordsFuzzCheck.examine(path: RecordsImage.path, options: options,
                                                       model: readOnly ? nil : model)
                guard case .read(let objects, let problems) = outcome, problems.isEmpty,
                      objects >= RecordsWorkload.seedObjects else {
                    let mode = readOnly ? "read-only" : "read-write"
                    throw ToolError("record seed store (\(placement), \(mode)): \(outcome)")
                }
            }
        }
    }

    /// Number of post-checkpoint commits wholly inside the first `length` bytes.
    func commitsWithin(_ length: Int) -> Int { commitEnds.filter { $0 <= length }.count }

    // MARK: Saving for the workers

    func save(to dir: String) throws {
        try writeFile(dir + "/fixture.bin", bytes)
        // The frame map is derived from the bytes again on load.
        var text = ""
        for (index, state) in states.enumerated() {
            text += "state \(index)\n"
            for (name, tree) in state.trees.sorted(by: { $0.key < $1.key }) {
                let hexName = Array(name.utf8).map { String($0, radix: 16) }.joined(separator: ",")
                text += "tree \(hexName) \(tree.count) \(tree.sum)\n"
            }
        }
        try writeFile(dir + "/fixture.txt", Array(text.utf8))
        try writeFile(dir + "/records.bin", records.bytes)
    }

    static func load(from dir: String) throws -> FuzzFixture {
        var fixture = FuzzFixture()
        fixture.bytes = try readFile(dir + "/fixture.bin")
        let text = String(decoding: try readFile(dir + "/fixture.txt"), as: UTF8.self)
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            switch fields[0] {
            case "state": fixture.states.append(ContentDigest())
            case "tree":
                guard fields.count == 4, let count = Int(fields[2]), let sum = UInt64(fields[3]) else {
                    throw ToolError("bad fixture line: \(line)")
                }
                let name = String(decoding: fields[1].split(separator: ",").compactMap { UInt8($0, radix: 16) },
                                  as: UTF8.self)
                fixture.states[fixture.states.count - 1].trees[name] = ContentDigest.Tree(count: count, sum: sum)
            default: throw ToolError("bad fixture line: \(line)")
            }
        }
        try fixture.mapFrames()
        fixture.records = RecordsImage(bytes: try readFile(dir + "/records.bin"))
        return fixture
    }
}
