import ArgumentParser
import Foundation

/// `strata-bench objects`: Strata's object layer against the record layer alone (what objects
/// cost) and GRDB 7 (what a Swift user on Linux picks today) twice, through `Codable` records
/// (`grdb`, the path its guides start with) and at its best (`grdb-rows`: hand-written row
/// decoding and encoding, cached statements), on the same data.
///
/// As in `records`, every (repeat, workload, engine) runs in a child process (`objects-run`),
/// so each run's peak RSS is its own; the engines alternate within each workload and the first
/// engine rotates each repeat (``PairedRuns``). Engines must agree on what they read and on
/// what their stores hold afterwards; a disagreement fails the run.
struct ObjectsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "objects",
        abstract: "Objects: Strata's object layer vs its record layer and GRDB 7.")

    @Option(help: "Sizes and repeats: default (what make bench runs: the issue's sizes, one run, about 30 s) or full (the same sizes, 3 runs). Size options override.")
    var scale: BenchScale = .default
    @Option(name: .customLong("repeat"), help: "Runs of each workload per engine, the median reported (default scale: 1; full: 3).")
    var repeats: Int?
    @OptionGroup var options: BenchOptions
    @Option(help: "Comma-separated engines: objects, objects-nohistory, records, grdb, grdb-rows.")
    var engines: String = ObjectsEngineName.allCases.map(\.rawValue).joined(separator: ",")
    @Option(help: "Comma-separated workloads (default: all): \(ObjectsWorkload.allCases.map(\.rawValue).joined(separator: ", ")).")
    var workloads: String?

    // Sizes: nil takes the scale's figure (`ObjectsScale.preset`).
    @Option(help: "Items inserted and read by fetchall (both scales: 100000).") var items: Int?
    @Option(help: "Items per list, the to-many traverse reads (both scales: 10000).") var itemsPerList: Int?
    @Option(help: "Items per save in insert (both scales: 1000).") var batch: Int?
    @Option(help: "Indexed queries in fetchindexed (both scales: 10000).") var queries: Int?
    @Option(help: "Queries per read transaction (both scales: 100).") var queryBatch: Int?
    @Option(help: "Lists traversed, cycling through the lists (both scales: 10).") var traversals: Int?
    @Option(help: "Items changed by update (both scales: 10000).") var updates: Int?
    @Option(help: "Items changed by the save merge takes in (both scales: 10000).") var merges: Int?
    @Option(help: "Registered faults whose memory is measured, object layer (both scales: 1000000).") var faults: Int?
    @Option(help: "Items with a property observer in observe, object layer (both scales: 10000).") var observed: Int?
    @Option(help: "Observed items the save in observe changes (both scales: 100).") var observedChanges: Int?
    @Option(help: "Seed of every value and random choice.") var seed: UInt64?
    @Option(help: "Also run insert, fetchall and traverse with this many items, in a table of their own, so the growth of each cost shows (full scale: 1000000; default scale: off).")
    var largeItems: Int?

    /// Repeats: the option, else the scale's.
    var repeatCount: Int { repeats ?? (scale == .full ? 3 : 1) }

    func validate() throws {
        guard repeatCount >= 1 else { throw ValidationError("--repeat must be at least 1") }
        let s = sizes()
        guard [s.items, s.itemsPerList, s.batch, s.queries, s.queryBatch, s.traversals, s.updates, s.merges, s.faults, s.observed, s.observedChanges]
            .allSatisfy({ $0 >= 1 }) else { throw ValidationError("every size and count must be at least 1") }
        _ = try parsedEngines()
        _ = try parsedWorkloads()
        if let largeItems, largeItems < 1 { throw ValidationError("--large-items must be at least 1") }
    }

    /// The scale's sizes with every size option given on the command line in their place.
    func sizes() -> ObjectsScale {
        var s = ObjectsScale.preset(scale)
        if let items { s.items = items }
        if let itemsPerList { s.itemsPerList = itemsPerList }
        if let batch { s.batch = batch }
        if let queries { s.queries = queries }
        if let queryBatch { s.queryBatch = queryBatch }
        if let traversals { s.traversals = traversals }
        if let updates { s.updates = updates }
        if let merges { s.merges = merges }
        if let faults { s.faults = faults }
        if let observed { s.observed = observed }
        if let observedChanges { s.observedChanges = observedChanges }
        if let seed { s.seed = seed }
        return s
    }

    private func parsedEngines() throws -> [ObjectsEngineName] {
        try parseList(engines, of: "engine", ObjectsEngineName.init(rawValue:))
    }

    /// The selected workloads, in canonical order (insert before the ones that read its store).
    private func parsedWorkloads() throws -> [ObjectsWorkload] {
        guard let workloads else { return ObjectsWorkload.allCases }
        let named = try parseList(workloads, of: "workload", ObjectsWorkload.init(rawValue:))
        return ObjectsWorkload.allCases.filter(named.contains)
    }

    /// Items of the second pass (insert, fetchall and traverse again, with this many items):
    /// the option, else the full scale's 1,000,000; none at the default scale.
    var largeItemCount: Int? { largeItems ?? (scale == .full ? 1_000_000 : nil) }

    /// The workloads the second pass runs: those whose cost grows with the store.
    static let growthWorkloads: [ObjectsWorkload] = [.insert, .fetchall, .traverse]

    func run() throws {
        let scale = sizes()
        let engines = try parsedEngines()
        let workloads = try parsedWorkloads()
        let failed = try options.withWorkDirectory("objects") { root in
            var passes = [try runPass(scale, workloads, engines, root: root + "/main", named: nil)]
            passes[0].report.printTable()
            if let n = largeItemCount, n != scale.items {
                var large = scale
                large.items = n
                let grown = workloads.filter(Self.growthWorkloads.contains)
                if !grown.isEmpty {
                    passes.append(try runPass(large, grown, engines, root: root + "/large", named: "\(n) items"))
                    passes[1].report.printTable()
                }
            }
            if let json = options.json { try Self.writeJSON(passes.map(\.report), to: json) }
            try options.writePage(passes.map { ReportSection($0.report) })
            return passes.contains(where: \.failed)
        }
        if failed { throw ExitCode(1) }
    }

    /// What one pass over the workloads gave: its report, and whether a run failed, engines
    /// disagreed or a store did not check clean.
    struct Pass {
        var report: Report<ObjectsRunDetails>
        var failed: Bool
    }

    /// Runs `workloads` on `engines` at `scale`, every repeat, each run in a child process under
    /// `root`. `named`: what sets a second pass apart, in its log lines and title.
    func runPass(_ scale: ObjectsScale, _ workloads: [ObjectsWorkload], _ engines: [ObjectsEngineName], root: String,
                 named: String?) throws -> Pass {
        let repeats = repeatCount
        var driver = PairedRuns(benchmark: try ObjectsBenchmark(scale: scale), engines: engines, workloads: workloads,
                                repeats: repeats, root: root, keep: options.keep)
        driver.tag = named.map { " (\($0))" } ?? ""
        let pass = driver.run()
        let title = named == nil
            ? "strata-bench objects: \(scale.items) items in \(scale.lists) lists of \(scale.itemsPerList), "
                + "\(scale.batch) per save; \(scale.queries) indexed queries (\(scale.queryBatch) per read transaction); "
                + "\(scale.traversals) traversals; \(scale.updates) updates; \(scale.merges) merged; \(scale.faults) faults; "
                + "\(scale.observedChanges) of \(scale.observed) observed changed; seed \(scale.seed); median of \(repeats) run(s)"
                + (scale == ObjectsScale.preset(self.scale) ? "; \(self.scale.rawValue) scale" : "")
            : "strata-bench objects, growth: \(workloads.map(\.rawValue).joined(separator: ", ")) with \(scale.items) items in "
                + "\(scale.lists) lists of \(scale.itemsPerList), \(scale.batch) per save; \(scale.traversals) traversals; "
                + "seed \(scale.seed); median of \(repeats) run(s)"
        var report = Report(
            title: title,
            configurations: engines.map(Self.configuration),
            notes: ["ops/s counts items inserted, objects read (fetchall: 3 properties each; traverse: members), queries "
                    + "answered, objects changed, objects merged, faults registered, observed objects changed (observe: from the merge's start until every observer was told); p50/p99 per save (insert), per "
                    + "\(scale.queryBatch) queries, per traversal; read workloads are timed after one untimed warm pass",
                    "update and merge run on a copy of the store insert left; their loading (and merge's save) is untimed",
                    "the targets against GRDB at its best use the faster of grdb and grdb-rows on each workload (see the summary)"],
            rows: pass.rows, subject: ObjectsEngineName.objects.rawValue,
            baselines: engines.filter { $0 != .objects }.map(\.rawValue), checks: pass.checks,
            parameters: ["items": scale.items, "items_per_list": scale.itemsPerList, "repeats": repeats])
        ObjectsSummary(rows: pass.rows, engines: engines).add(to: &report)
        return Pass(report: report, failed: pass.failed)
    }

    static func configuration(_ e: ObjectsEngineName) -> String {
        switch e {
        case .objects, .objectsNoHistory: return StrataObjectsEngine.configuration(e)
        case .records: return RecordLayerObjectsEngine.configuration
        case .grdb: return GRDBObjectsEngine.configuration
        case .grdbRows: return GRDBRowsObjectsEngine.configuration
        }
    }
}
