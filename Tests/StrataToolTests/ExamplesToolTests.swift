import Foundation
@testable import strata_examples
import Testing

/// `strata-examples`: the seeds' scenarios, and the record layer's migration and word-index examples, run as a user runs them. Each must
/// exit 0 and print the values it checks.
@Suite struct ExamplesToolTests {
    @Test(arguments: [
        ("fullname", "fullName observer: Ada King -> Grace Hopper"),
        ("blogpost", "sorted in memory by title: [\"Aaron — 2026-10-15\", \"Ada Lovelace — 2026-09-30\", \"Ada Lovelace — 2026-11-02\"]"),
        ("todolist", "milk.listName: Groceries"),
        ("invoice", "invoice.total observer: [20.4]"),
        ("location", "changedValuesForCurrentEvent: [\"coreLocation\", \"latitude\"]"),
        ("properties", "languages: [\"English 1\", \"French 2\"]"),
        ("records", "notes found by CONTAINSANYWORD in a fetch: 2"),
    ])
    func exampleRunsAndPrintsWhatItChecks(subcommand: String, line: String) throws {
        let run = try Tool.run("strata-examples", [subcommand])
        #expect(run.status == 0 && !run.signaled, "\(subcommand): \(run.ending)\n\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains(line), "\(run.stdout)")
        #expect(run.stdout.hasPrefix("== \(subcommand):"))
    }

    /// The properties example (the README's until 2026-11-28): what its observers,
    /// tracking closure and change queries printed, then what the reopened store holds.
    @Test func propertiesPrintsWhatItsObserversHeard() throws {
        let run = try Tool.run("strata-examples", ["properties"])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        for line in ["fullName: Ada Lovelace -> Ada King", "position changed",
                     #"["fullName", "lastName", "latitude", "position"]"#, "true true", "fullName: Ada King",
                     "position: 51.50,0.00", "isSelected: false"] {
            #expect(run.stdout.contains(line), "the properties example did not print \(line):\n\(run.stdout)")
        }
    }

    @Test func allRunsTheSeven() throws {
        let run = try Tool.run("strata-examples", ["all"])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.split(separator: "\n").filter { $0.hasPrefix("== ") }.count == 7)
    }

    /// A claim that does not hold stops the example with the claim and both values.
    @Test func aWrongValueFailsTheExample() throws {
        #expect(throws: ExampleFailure.self) { try show("total", 3, expected: 4) }
        do {
            try show("total", 3, expected: 4)
        } catch {
            #expect("\(error)" == "total: expected 4, got 3")
        }
        #expect(throws: Never.self) { try show("total", 4, expected: 4) }
    }
}
