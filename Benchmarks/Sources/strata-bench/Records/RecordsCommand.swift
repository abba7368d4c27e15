import ArgumentParser
import Foundation

/// `strata-bench records`: the record layer and its derived attributes against SQLite with
/// Core Data's recount triggers and with hand-written incremental triggers.
///
/// As in `kv`, every (repeat, workload, engine) runs in a child process (`records-run`), the
/// engines alternate within each workload and the first engine rotates each repeat
/// (``PairedRuns``). After each
/// workload every engine reports sums over its store (counts, totals, copies, search names,
/// hits); engines that disagree fail the run, so a fast wrong answer cannot win.
struct RecordsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "records",
        abstract: "Records with derived attributes: Strata vs SQLite (recount and incremental triggers).")

    @Option(help: "Sizes and repeats: default (what make bench runs, about 1 minute) or full (the issue's sizes, 3 runs). Size options override.")
    var scale: BenchScale = .default
    @Option(name: .customLong("repeat"), help: "Runs of each workload per engine, the median reported (default scale: 1; full: 3).")
    var repeats: Int?
    @OptionGroup var options: BenchOptions
    @Option(help: "Comma-separated engines: strata, strata-history, sqlite-recount, sqlite-incremental.")
    var engines: String = RecordsEngineName.allCases.map(\.rawValue).joined(separator: ",")
    @Option(help: "Comma-separated workloads (default: all).") var workloads: String?

    // Sizes: nil takes the scale's figure (`RecordsScale.preset`).
    @Option(help: "Lists in bulkinsert (default scale: 200; full: 1000).") var lists: Int?
    @Option(help: "Items per list in bulkinsert (default scale: 500; full: 1000).") var itemsPerList: Int?
    @Option(help: "List sizes of the insert_list<N> workloads (both scales: 10,1000,100000).") var listSizes: String?
    @Option(help: "Items inserted by each insert_list<N> workload (both scales: 10000).") var inserts: Int?
    @Option(help: "Items in lists of size N before insert_list<N>, at least one list (both scales: 100000).") var setupItems: Int?
    @Option(help: "Moves in moveitems (default scale: 5000; full: 10000).") var moves: Int?
    @Option(help: "Renames in renamefanout (default scale: 20; full: 100).") var renames: Int?
    @Option(help: "Lists in renamefanout (default scale: 20; full: 100).") var fanoutLists: Int?
    @Option(help: "Items per list in renamefanout (both scales: 10000).") var fanoutItems: Int?
    @Option(help: "Queries in prefixsearch and fetchindexed (both scales: 10000).") var queries: Int?
    @Option(help: "Notes in textindex, textsearch, textfilter and textupdate (default scale: 20000; full: 100000).") var notes: Int?
    @Option(help: "Searches in textsearch and textfilter (default scale: 5000; full: 10000).") var textQueries: Int?
    @Option(help: "Bodies rewritten in textupdate (default scale: 5000; full: 10000).") var textUpdates: Int?
    @Option(help: "Operations per transaction (both scales: 100).") var batch: Int?
    @Option(help: "Seconds sqlite-recount's insert_list<N> runs for, N ≥ --window-from-list-size, instead of a fixed count; 0: a fixed count (default scale: 5; full: 30).")
    var recountWindow: Double?
    @Option(help: "Smallest list size whose sqlite-recount inserts run for a time window (both scales: 100000).")
    var windowFromListSize: Int?

    /// Repeats: the option, else the scale's.
    var repeatCount: Int { repeats ?? (scale == .full ? 3 : 1) }

    func validate() throws {
        guard repeatCount >= 1 else { throw ValidationError("--repeat must be at least 1") }
        let s = try sizes()
        guard [s.lists, s.itemsPerList, s.inserts, s.setupItems, s.moves, s.renames, s.fanoutLists, s.fanoutItems,
               s.queries, s.notes, s.textQueries, s.textUpdates, s.batch].allSatisfy({ $0 >= 1 }), !s.listSizes.isEmpty else {
            throw ValidationError("every size and count must be at least 1")
        }
        guard s.recountWindow >= 0, s.recountWindow.isFinite else { throw ValidationError("--recount-window must be 0 or more") }
        guard s.lists >= 2 else { throw ValidationError("--lists must be at least 2 (moves need another list)") }
        _ = try parsedEngines()
        _ = try parsedWorkloads(s)
    }

    /// The scale's sizes with every size option given on the command line in their place.
    func sizes() throws -> RecordsScale {
        var s = RecordsScale.preset(scale)
        if let listSizes {
            s.listSizes = try listSizes.split(separator: ",").map {
                guard let n = Int($0.trimmingCharacters(in: .whitespaces)), n >= 1 else { throw ValidationError("bad list size '\($0)'") }
                return n
            }
        }
        if let lists { s.lists = lists }
        if let itemsPerList { s.itemsPerList = itemsPerList }
        if let inserts { s.inserts = inserts }
        if let setupItems { s.setupItems = setupItems }
        if let moves { s.moves = moves }
        if let renames { s.renames = renames }
        if let fanoutLists { s.fanoutLists = fanoutLists }
        if let fanoutItems { s.fanoutItems = fanoutItems }
        if let queries { s.queries = queries }
        if let notes { s.notes = notes }
        if let textQueries { s.textQueries = textQueries }
        if let textUpdates { s.textUpdates = textUpdates }
        if let batch { s.batch = batch }
        if let recountWindow { s.recountWindow = recountWindow }
        if let windowFromListSize { s.windowFromListSize = windowFromListSize }
        return s
    }

    private func parsedEngines() throws -> [RecordsEngineName] {
        try parseList(engines, of: "engine", RecordsEngineName.init(rawValue:))
    }

    /// The selected workloads, in canonical order (bulkinsert before the ones that read its store).
    private func parsedWorkloads(_ scale: RecordsScale) throws -> [RecordsWorkload] {
        guard let workloads else { return RecordsWorkload.all(scale) }
        let named = try parseList(workloads, of: "workload", RecordsWorkload.init(name:))
        return RecordsWorkload.all(scale).filter(named.contains) + named.filter { !RecordsWorkload.all(scale).contains($0) }
    }

    func run() throws {
        let scale = try sizes()
        let repeats = repeatCount
        let engines = try parsedEngines()
        let workloads = try parsedWorkloads(scale)
        let failed = try options.withWorkDirectory("records") { root in
            let pass = PairedRuns(benchmark: try RecordsBenchmark(scale: scale), engines: engines, workloads: workloads,
                                  repeats: repeats, root: root, keep: options.keep).run()
            var report = makeReport(pass, scale, engines, repeats)
            RecordsSummary(rows: pass.rows, scale: scale, engines: engines).add(to: &report)
            report.printTable()
            if let json = options.json { try report.writeJSON(to: json) }
            try options.writePage([ReportSection(report)])
            return pass.failed
        }
        if failed { throw ExitCode(1) }
    }

    /// The report of `pass`: what ran, how each engine is set up, what the figures count.
    private func makeReport(_ pass: PairedRuns<RecordsBenchmark>.Outcome, _ scale: RecordsScale, _ engines: [RecordsEngineName],
                            _ repeats: Int) -> Report<RecordsRunDetails> {
        Report(
            title: "strata-bench records: \(scale.lists) lists × \(scale.itemsPerList) items; \(scale.inserts) inserts into "
                + "lists of \(scale.listSizes.map(String.init).joined(separator: ", ")); \(scale.moves) moves; "
                + "\(scale.renames) renames of lists with \(scale.fanoutItems) items; \(scale.queries) queries; "
                + "\(scale.notes) notes, \(scale.textQueries) word searches, \(scale.textUpdates) note rewrites; "
                + "\(scale.batch) operations per transaction (renames: one each); median of \(repeats) run(s)"
                + (scale == RecordsScale.preset(self.scale) ? "; \(self.scale.rawValue) scale" : ""),
            configurations: engines.map {
                $0 == .strata || $0 == .strataHistory
                    ? StrataRecordsEngine.configuration($0) : SQLiteRecordsEngine.configuration($0)
            },
            notes: ["ops/s counts rows inserted (bulkinsert: lists and items), items inserted, items moved, lists renamed, "
                    + "queries answered, notes inserted or rewritten; p50/p99 per transaction (queries: per \(scale.batch) queries in one read transaction)",
                    "setup of insert_list<N> and renamefanout is untimed (SQLite: rows loaded without triggers, derived "
                    + "columns filled in one UPDATE, triggers created after)"]
                + (scale.recountWindow > 0 && engines.contains(.sqliteRecount) && scale.listSizes.contains { $0 >= scale.windowFromListSize }
                    ? ["sqlite-recount's insert_list<N> for N ≥ \(scale.windowFromListSize) runs for a \(RateFormat.duration(scale.recountWindow)) "
                       + "time window (whole transactions) instead of \(scale.inserts) inserts: its recount is O(list size) per "
                       + "insert; ops/s is the inserts done ÷ the time, the store is checked against what was inserted"]
                    : []),
            rows: pass.rows, subject: RecordsEngineName.strata.rawValue,
            baselines: engines.filter { $0 != .strata }.map(\.rawValue), checks: pass.checks,
            parameters: ["lists": scale.lists, "items_per_list": scale.itemsPerList, "repeats": repeats])
    }
}
