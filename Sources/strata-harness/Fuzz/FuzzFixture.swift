import ArgumentParser
import StrataStorage
import StrataTesting
#if canImport(Glibc)
import Glibc
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
        var o = StoreOptions(durability: .full)
        o.fileSystem = fs
        o.syncIntervalMilliseconds = 3_600_000
        o.compactOnCloseGarbageRatio = 1
        o.checkpointLogBytes = 1 << 30
        o.checkpointDirtyBytes = 1 << 30
        o.cacheBytes = 1 << 20
        return o
    }

    /// Several trees, a few thousand keys, overflow values; a checkpoint; eight commits after
    /// it (a tree created, an overflow value in the last); the file as a crash leaves it.
    static func build(seed: UInt64) throws -> FuzzFixture {
        let fs = SimulatedFileSystem()
        var rng = SplitMix64(seed: mixSeed(seed, 0x4649_5854))
        var f = FuzzFixture()
        do {
            let store = try Store(path: path, options: options(fs))
            try store.write { tx in
                let users = try tx.createTree("users")
                let orders = try tx.createTree("orders")
                let blobs = try tx.createTree("blobs")
                for i in 0..<1500 { try users.put(CrashWorkload.key(i), rng.bytes(rng.int(10...120))) }
                for i in 0..<1000 { try orders.put(Array("order-\(i * 7)".utf8), Array("amount \(i)".utf8)) }
                for i in 0..<16 {
                    let n = rng.int(2_000...8_000)
                    try blobs.put(CrashWorkload.key(i), i % 2 == 0 ? rng.bytes(n) : [UInt8](repeating: UInt8(i), count: n))
                }
            }
            for round in 0..<4 {
                try store.write { tx in
                    let users = try tx.tree("users")!
                    for _ in 0..<100 { try users.put(CrashWorkload.key(rng.below(1500)), Array("updated \(round)".utf8)) }
                    for _ in 0..<30 { _ = try users.delete(CrashWorkload.key(rng.below(1500))) }
                }
            }
            try store.checkpoint()
            f.states.append(try store.read { try digestContent($0, thorough: true) })
            for c in 0..<8 {
                try store.write { tx in
                    if c == 3 { try tx.createTree("late").put(Array("x".utf8), Array("y".utf8)) }
                    let orders = try tx.tree("orders")!
                    for _ in 0..<5 { try orders.put(Array("order-\(rng.below(9000))".utf8), Array("c\(c)".utf8)) }
                    _ = try tx.tree("users")!.delete(CrashWorkload.key(rng.below(1500)))
                    if c == 7 { try tx.tree("blobs")!.put(Array("last".utf8), rng.bytes(5_000)) }
                }
                f.states.append(try store.read { try digestContent($0, thorough: true) })
            }
            // The file as it is now, before close: commits after the checkpoint, then
            // preallocated zeros. The store is dropped without closing (its I/O stops here).
            f.bytes = fs.contents(of: path) ?? []
            fs.crashAfter(operations: 0)
            withExtendedLifetime(store) {}
        }
        try f.mapFrames()
        // Keep the log and 4 KiB of the zeros after it.
        f.bytes = Array(f.bytes.prefix(f.logEnd)) + [UInt8](repeating: 0, count: 4096)
        try f.mapFrames()
        try f.checkSurgery()
        f.records = try RecordsWorkload.seedImage(seed: mixSeed(seed, 0x5245_4353))
        try f.checkRecordsSeed()
        return f
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
            throw HarnessError("seed store: unexpected frame map (\(frames.count) frames, \(commitEnds.count) commits after the checkpoint)")
        }
        lastCommitRegion = commitEnds[commitEnds.count - 2]
    }

    /// The page surgery must be invisible when it forges nothing: every reachable page
    /// rewritten as itself reads back as the same store, and `check()` finds nothing.
    func checkSurgery() throws {
        guard let surgery else { throw HarnessError("seed store: no frame map") }
        for offset in surgery.pageImages.keys.sorted() {
            var s = surgery
            try s.replacePage(at: offset, with: surgery.pageImages[offset]!)
            let outcome = FuzzCase.examine(s.bytes, readOnly: true, layer: .simulated, fixture: self)
            guard case .read(let index, let problems) = outcome, index == full, problems.isEmpty else {
                throw HarnessError("seed store: the page at \(offset) rewritten as itself reads as \(outcome)")
            }
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
                var o = RecordsImage.options(fs)
                o.readOnly = readOnly
                let outcome = RecordsFuzzCheck.examine(path: RecordsImage.path, options: o, model: readOnly ? nil : model)
                guard case .read(let n, let problems) = outcome, problems.isEmpty, n >= 60 else {
                    throw HarnessError("record seed store (\(placement), \(readOnly ? "read-only" : "read-write")): \(outcome)")
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
        for (k, s) in states.enumerated() {
            text += "state \(k)\n"
            for (name, t) in s.trees.sorted(by: { $0.key < $1.key }) {
                text += "tree \(Array(name.utf8).map { String($0, radix: 16) }.joined(separator: ",")) \(t.count) \(t.sum)\n"
            }
        }
        try writeFile(dir + "/fixture.txt", Array(text.utf8))
        try writeFile(dir + "/records.bin", records.bytes)
    }

    static func load(from dir: String) throws -> FuzzFixture {
        var f = FuzzFixture()
        f.bytes = try readFile(dir + "/fixture.bin")
        let text = String(decoding: try readFile(dir + "/fixture.txt"), as: UTF8.self)
        for line in text.split(separator: "\n") {
            let p = line.split(separator: " ").map(String.init)
            switch p[0] {
            case "state": f.states.append(ContentDigest())
            case "tree":
                guard p.count == 4, let count = Int(p[2]), let sum = UInt64(p[3]) else { throw HarnessError("bad fixture line: \(line)") }
                let name = String(decoding: p[1].split(separator: ",").compactMap { UInt8($0, radix: 16) }, as: UTF8.self)
                f.states[f.states.count - 1].trees[name] = ContentDigest.Tree(count: count, sum: sum)
            default: throw HarnessError("bad fixture line: \(line)")
            }
        }
        try f.mapFrames()
        f.records = RecordsImage(bytes: try readFile(dir + "/records.bin"))
        return f
    }
}
