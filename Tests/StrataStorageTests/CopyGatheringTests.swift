import Testing
@testable import StrataStorage

/// Compaction and backup gather their frames and write them a megabyte at a time
/// (``LogWriter/gatherWrites(upTo:)``): trees of every size from empty to several gathers,
/// with overflow values among the leaves and one value longer than a whole gather (written
/// alone, after what was gathered before it), copy entry for entry, check clean and reopen.
@Suite struct CopyGatheringTests {
    /// Entry counts from none, through one leaf (~30 entries of 100 bytes), to several
    /// megabytes of frames.
    static let counts = [0, 1, 29, 31, 1_000, 9_000, 30_000]

    @Test(arguments: counts)
    func compactionCopiesTreesAcrossGathers(entries: Int) throws {
        let seed = UInt64(20_261_126 + entries)
        let fs = SimulatedFileSystem()
        let store = try Store(path: relPath, options: relOptions(fs))
        var rng = SeededRandom(seed: seed)
        var model: [String: [[UInt8]: [UInt8]]] = ["a": [:], "b": [:]]
        try store.write { tx in
            for name in ["a", "b"] {
                let t = try tx.createTree(name)
                for i in 0..<(name == "a" ? entries : entries / 3) {
                    // Every 97th value overflows its leaf; the 500th is longer than a gather.
                    let length = i == 500 ? (3 << 20) / 2 : i % 97 == 5 ? 9_000 : 100
                    let v = randomBytes(length, &rng)
                    try t.put(key(i), v)
                    model[name]![key(i)] = v
                }
            }
        }
        try store.compact()
        let report = try store.check()
        #expect(report.isClean, "seed \(seed): \(report.problems)")
        try expectBackupAndReopen(store, hold: model, fs: fs, "seed \(seed)")
    }
}
