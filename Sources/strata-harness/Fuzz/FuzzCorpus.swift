import StrataStorage
import StrataTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Seed inputs for the libFuzzer target (`strata-fuzz`): real store files of several shapes,
/// each as a crash would leave it (commits after the last checkpoint) or as close leaves it.
/// Small ones matter most: libFuzzer mutates a 9 KB file far more often per second.
enum FuzzCorpus {
    static func write(to dir: String, seed: UInt64) throws -> Int {
        try makeDirectories(dir)
        var rng = SplitMix64(seed: mixSeed(seed, 0x434F_5250))
        var count = 0
        func save(_ name: String, _ bytes: [UInt8]) throws {
            try writeFile("\(dir)/\(name)", bytes)
            count += 1
        }
        try save("fixture-crashed.strata", try FuzzFixture.build(seed: seed).bytes)
        // A freshly created store, and the same closed.
        try save("empty-open.strata", try store { _ in })
        try save("empty-closed.strata", try store(close: true) { _ in })
        // One tree, a few keys, commits after the checkpoint (the log replay path).
        try save("small-crashed.strata", try store { seedStore in
            try seedStore.write { tx in
                let tree = try tx.createTree("t")
                for i in 0..<12 { try tree.put(CrashWorkload.key(i), rng.bytes(rng.int(0...40))) }
            }
            try seedStore.checkpoint()
            try seedStore.write { tx in
                _ = try tx.tree("t")!.delete(CrashWorkload.key(3))
                try tx.tree("t")!.put(Array("late".utf8), Array("v".utf8))
            }
        })
        // Two levels, an overflow value, a dropped tree, closed cleanly.
        try save("branches-closed.strata", try store(close: true) { seedStore in
            try seedStore.write { tx in
                let tree = try tx.createTree("a")
                for i in 0..<400 { try tree.put(CrashWorkload.key(i), rng.bytes(rng.int(5...30))) }
                try tx.createTree("gone").put(Array("x".utf8), Array("y".utf8))
                try tree.put(Array("big".utf8), rng.bytes(6_000))
            }
            try seedStore.write { tx in try tx.dropTree("gone") }
        })
        // Leaf deltas (FORMAT.md §4): a few thousand keys checkpointed, then about one key in
        // ten overwritten with a value of the same length, spread over every leaf, and a second
        // checkpoint, which writes each leaf changed in a few cells as a delta naming its first
        // image; a commit after it (the log replay path over a tree of deltas).
        try save("deltas-crashed.strata", try store { seedStore in
            let keys = 3000
            let values = (0..<keys).map { _ in rng.bytes(rng.int(8...24)) }
            try seedStore.write { tx in
                let tree = try tx.createTree("d")
                for i in 0..<keys { try tree.put(CrashWorkload.key(i), values[i]) }
            }
            try seedStore.checkpoint()
            try seedStore.write { tx in
                let tree = try tx.tree("d")!
                for i in stride(from: rng.below(10), to: keys, by: 10) {
                    try tree.put(CrashWorkload.key(i), rng.bytes(values[i].count))
                }
            }
            try seedStore.checkpoint()
            try seedStore.write { tx in
                try tx.tree("d")!.put(CrashWorkload.key(keys / 2), rng.bytes(values[keys / 2].count))
            }
        })
        return count
    }

    /// Seed inputs for the record target (`strata-fuzz-records`): the record seed store's trees
    /// (``RecordsImage``) after 20 and after 150 workload transactions, in each placement.
    static func writeRecords(to dir: String, seed: UInt64) throws -> Int {
        try makeDirectories(dir)
        var count = 0
        for transactions in [20, 150] {
            var image = try RecordsWorkload.seedImage(seed: mixSeed(seed, 0x5245_4353), transactions: transactions)
            for placement in RecordsImage.Placement.allCases {
                image.placement = placement
                try writeFile("\(dir)/todo-\(transactions)-\(placement).records", image.bytes)
                count += 1
            }
        }
        return count
    }

    /// Runs `body` on a new store in a simulated file system and returns the file's bytes,
    /// with the store closed or dropped as a crash leaves it (no closing checkpoint).
    private static func store(close: Bool = false, _ body: (Store) throws -> Void) throws -> [UInt8] {
        let fs = SimulatedFileSystem()
        let path = "/seed/store.strata"
        var options = StoreOptions(durability: .full)
        options.fileSystem = fs
        options.compactOnCloseGarbageRatio = 1
        options.syncIntervalMilliseconds = 3_600_000
        let store = try Store(path: path, options: options)
        try body(store)
        if close {
            try store.close()
        } else {
            fs.crashAfter(operations: 0)
        }
        var bytes = fs.contents(of: path) ?? []
        // Preallocated zeros after the log teach the fuzzer nothing: keep a little of them.
        while bytes.count > ReferenceFormat.logStart, bytes.last == 0,
              bytes[bytes.count - 64..<bytes.count].allSatisfy({ $0 == 0 }) {
            bytes.removeLast(64)
        }
        return bytes
    }
}
