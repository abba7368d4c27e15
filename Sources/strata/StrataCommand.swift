import ArgumentParser

/// The `strata` operator tool: one subcommand per file under Commands/.
@main
struct StrataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Inspect, check and maintain Strata store files.",
        subcommands: [])
}
