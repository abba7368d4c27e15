import ArgumentParser

/// The workloads of `strata-bench kv`, named as LevelDB's db_bench names them, in the order
/// they run. `readseq` scans a store just opened (every page read from the file and
/// decompressed); `readseq-warm` times a second full scan on the same open store, after an
/// untimed first one.
enum KVWorkload: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    case fillseq, fillrandom, readrandom, readseq
    case readseqWarm = "readseq-warm"
    case fillsync, deleterandom
}

extension KVWorkload: BenchWorkload {
    var name: String { rawValue }

    /// Workloads that start from the store fillrandom leaves behind.
    var needsStore: Bool {
        self == .readrandom || self == .readseq || self == .readseqWarm || self == .deleterandom
    }
}
