import ArgumentParser
import Foundation

/// The seeds' scenarios as runnable programs: each subcommand builds a small store, prints
/// what it demonstrates as it goes, and fails (exit status 1) when a value is not what it
/// says. `strata-examples all` runs the seven in turn.
@main
struct StrataExamples: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-examples",
        abstract: "Transient, computed, cached and derived properties, and observation, on the seeds' scenarios; a record store migrated and searched.",
        subcommands: [FullName.self, BlogPosts.self, TodoLists.self, Invoices.self, Location.self, Properties.self,
                      RecordStores.self, All.self]
    )
}
