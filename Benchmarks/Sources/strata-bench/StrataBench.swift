import ArgumentParser

/// `strata-bench`: benchmarks of Strata against baselines. `kv` is the default subcommand, so
/// running the tool bare runs the key-value benchmark with its defaults.
@main
struct StrataBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-bench",
        abstract: "Side-by-side benchmarks of Strata: kv (vs SQLite and LMDB), records (vs SQLite with triggers), objects (vs the record layer and GRDB), replicate (to PostgreSQL).",
        subcommands: [KVCommand.self, KVRunCommand.self, RecordsCommand.self, RecordsRunCommand.self, ObjectsCommand.self,
                      ObjectsRunCommand.self, ReplicateCommand.self, ReportCommand.self],
        defaultSubcommand: KVCommand.self)
}
