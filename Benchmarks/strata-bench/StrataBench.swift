import ArgumentParser

/// `strata-bench`: benchmarks of Strata against baselines. `kv` is the default subcommand, so
/// running the tool bare runs the key-value benchmark with its defaults.
@main
struct StrataBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-bench",
        abstract: "Benchmarks for the Strata storage engine.",
        subcommands: [KVCommand.self, KVRunCommand.self],
        defaultSubcommand: KVCommand.self)
}
