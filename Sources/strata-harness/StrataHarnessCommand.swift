import ArgumentParser

/// `strata-harness`: the crash and fuzz harness (docs/reliability.md). Not a product: it
/// links the test support and liblz4, which the operator tool `strata` does not need, and
/// runs its own worker processes (`crash-test-writer`, `fuzz-worker`) by re-executing itself.
@main
struct StrataHarnessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-harness",
        abstract: "The crash and fuzz harness of Strata (not shipped).",
        subcommands: [CrashTestCommand.self, FuzzCommand.self, CrashTestWriterCommand.self, FuzzWorkerCommand.self,
                      WriteLoadCommand.self, MultiProcessTestCommand.self, MultiProcessWorkerCommand.self,
                      ReplicationKillTestCommand.self, ConvergeTestCommand.self, ConvergeWriterCommand.self])
}
