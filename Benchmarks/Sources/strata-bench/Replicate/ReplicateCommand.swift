import ArgumentParser
import Foundation

/// `strata-bench replicate`: replication to PostgreSQL, as `strata replicate` does it: rows per
/// second pushed, with `--batch N` and with `--batch 1`, and the lag under a steady commit rate;
/// target ≥ 50,000 rows/s. The bench drives the root package's `strata` tool as a child process
/// (``StrataTool``) against a throwaway PostgreSQL cluster, and checks PostgreSQL against the store
/// after every push (``ReplicaDigest``): a wrong replica fails the run instead of posting a figure.
/// The phases: ``ReplicateRunner``.
struct ReplicateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replicate",
        abstract: "Replication to PostgreSQL: rows/s strata replicate pushes (grouped and one by one), lag at a steady rate.")

    @Option(help: "Sizes: default (what make bench runs, about 40 s) or full (a store ten times larger, about 3 min). Size options override.")
    var scale: BenchScale = .default
    @OptionGroup var options: BenchOptions
    @Option(help: "The strata tool (default: STRATA_TOOL, else the checkout's .build/release/strata, else .build/debug/strata).")
    var strata: String?
    @Option(help: "Store transactions per PostgreSQL transaction in the grouped pushes (the tool's default); the other push uses 1.")
    var batch = 1_000

    // Sizes: nil takes the scale's figure (`ReplicateScale.preset`).
    @Option(help: "Lists in the store the first push copies (default 5000; full 50000).") var lists: Int?
    @Option(help: "Items in it, on random lists (default 50000; full 500000).") var items: Int?
    @Option(help: "Tags in it; each item has 0-2 (default 100; full 1000).") var tags: Int?
    @Option(help: "Small transactions the measured pushes apply (default 10000; full 50000).") var transactions: Int?
    @Option(help: "Commits per second while strata replicate --follow runs (both scales: 500).") var rate: Int?
    @Option(help: "Seconds of commits at that rate (default 5; full 20).") var followSeconds: Double?
    @Option(help: "Seed of every value and choice.") var seed: UInt64?

    func validate() throws {
        let s = sizes()
        guard [s.lists, s.items, s.tags, s.transactions, s.rate].allSatisfy({ $0 >= 1 }), s.followSeconds > 0 else {
            throw ValidationError("every size, the rate and --follow-seconds must be positive")
        }
        guard batch >= 2 else { throw ValidationError("--batch must be at least 2 (the other push runs with 1)") }
    }

    /// The scale's sizes with every size option given on the command line in their place.
    func sizes() -> ReplicateScale {
        var s = ReplicateScale.preset(scale)
        if let lists { s.lists = lists }
        if let items { s.items = items }
        if let tags { s.tags = tags }
        if let transactions { s.transactions = transactions }
        if let rate { s.rate = rate }
        if let followSeconds { s.followSeconds = followSeconds }
        if let seed { s.seed = seed }
        return s
    }

    func run() throws {
        let scale = sizes()
        let tool = try StrataTool.locate(option: strata)
        let equal = try options.withWorkDirectory("replicate") { root in
            let outcome = try ReplicateRunner(scale: scale, batch: batch, tool: tool, directory: root).run()
            var report = makeReport(outcome, scale, tool: tool)
            ReplicateSummary(outcome: outcome, scale: scale, batch: batch).add(to: &report)
            report.printTable()
            if let json = options.json { try report.writeJSON(to: json) }
            try options.writePage([ReportSection(report)])
            return outcome.allEqual
        }
        if !equal { throw ExitCode(1) }
    }

    private func makeReport(_ outcome: ReplicateRunner.Outcome, _ scale: ReplicateScale, tool: String)
        -> Report<ReplicateRunDetails> {
        let grouped = ReplicateRunner.engine(batch)
        let title = "strata-bench replicate: \(scale.lists) lists, \(scale.items) items, \(scale.tags) tags copied; "
            + "\(scale.transactions) transactions pushed with --batch \(batch) and --batch 1; --follow at \(scale.rate) "
            + "commits/s for \(RateFormat.duration(scale.followSeconds)); seed \(scale.seed)"
            + (scale == ReplicateScale.preset(self.scale) ? "; \(self.scale.rawValue) scale" : "")
        let debug = tool.contains("/debug/") ? " (a DEBUG build: the figures are not the tool's)" : ""
        return Report(
            title: title,
            configurations: ["tool: \(tool)\(debug), a child process per push, PGPASSWORD in its environment",
                             ReplicateModel.configuration,
                             "PostgreSQL: a throwaway cluster on this machine (loopback TCP, fsync=off, defaults otherwise), "
                                + "a fresh database per engine"],
            notes: ["ops/s are rows PostgreSQL wrote per second of the push, timed by the tool (its first query to its last: "
                    + "the process's start, opening the store and connecting are left out)",
                    "copy: the first push, which copies the store; push: one push of the \(scale.transactions) transactions "
                    + "committed after it; follow: strata replicate --follow while the store commits at \(scale.rate)/s (its "
                    + "rows/s are the rate's), p50/p99 each transaction's lag in µs, from its commit until a reader of "
                    + "PostgreSQL sees it",
                    "\(grouped): --batch \(batch), up to \(batch) store transactions in one PostgreSQL transaction; batch-1: one "
                    + "each; both push the same transactions, each into its own database",
                    "transactions: " + ReplicateWriter.mix,
                    "peak RSS: the strata tool's"],
            rows: outcome.rows, subject: grouped, baselines: [ReplicateRunner.engine(1)], checks: [],
            parameters: ["lists": scale.lists, "items": scale.items, "tags": scale.tags, "transactions": scale.transactions,
                         "rate": scale.rate, "batch": batch, "repeats": 1])
    }
}
