/// `strata-bench kv` as the paired-run driver runs it: its children are `kv-run`, with the
/// keys' count and fillsync's commits; a run of a workload that reads fillrandom's store gets
/// that store's directory.
struct KVBenchmark: PairedBenchmark {
    typealias Details = KVRunDetails

    let count: Int
    let syncCommits: Int

    static var storeWorkload: KVWorkload { .fillrandom }

    func childArguments(_ engine: KVEngineName, _ workload: KVWorkload, directory: String, store: String) -> [String] {
        ["kv-run", "--engine", engine.rawValue, "--workload", workload.rawValue, "--count", String(count),
         "--dir", directory, "--filled-store", store, "--sync-commits", String(syncCommits)]
    }
}
