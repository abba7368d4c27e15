import ArgumentParser

/// `strata-bench report`: one HTML page from the JSON files of earlier runs (`kv`, `records`,
/// `objects` with `--json`), one section each, in the order given; `make bench REPORT=…` uses
/// it to put the whole run on one page.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write one HTML page (bar charts and tables) from JSON files that kv, records and objects wrote with --json.")

    @Argument(help: "JSON files written with --json.") var files: [String]
    @Option(name: .shortAndLong, help: "The HTML file to write.") var output: String

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name at least one JSON file") }
    }

    func run() throws {
        let sections = try files.map(ReportSection.init(jsonFile:))
        try HTMLReport(sections: sections).write(to: output)
        print("wrote \(output): \(sections.map(\.heading).joined(separator: ", "))")
    }
}
