import ArgumentParser
import Foundation

/// `strata-bench records`: the record layer and its derived attributes against SQLite with
/// Core Data's recount triggers and with hand-written incremental triggers.
///
/// As in `kv`, every (repeat, workload, engine) runs in a child process (`records-run`), the
/// engines alternate within each workload and the first engine rotates each repeat. After each
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
    @Option(help: "Also write the results as JSON to this file.") var json: String?
    @Option(help: "Also write the results as one HTML page (bar chart and table) to this file.") var report: String?
    @Option(help: "Comma-separated engines: strata, sqlite-recount, sqlite-incremental.")
    var engines: String = RecordsEngineName.allCases.map(\.rawValue).joined(separator: ",")
    @Option(help: "Comma-separated workloads (default: all).") var workloads: String?
    @Option(help: "Put work files in a fresh directory under this one (default: /tmp).") var dir: String?
    @Flag(help: "Keep the work files.") var keep = false

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
               s.queries, s.batch].allSatisfy({ $0 >= 1 }), !s.listSizes.isEmpty else {
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
        if let batch { s.batch = batch }
        if let recountWindow { s.recountWindow = recountWindow }
        if let windowFromListSize { s.windowFromListSize = windowFromListSize }
        return s
    }

    private func parsedEngines() throws -> [RecordsEngineName] {
        try engines.split(separator: ",").map {
            guard let e = RecordsEngineName(rawValue: $0.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("unknown engine '\($0)'")
            }
            return e
        }
    }

    /// The selected workloads, in canonical order (bulkinsert before the ones that read its store).
    private func parsedWorkloads(_ scale: RecordsScale) throws -> [RecordsWorkload] {
        guard let workloads else { return RecordsWorkload.all(scale) }
        let named = try workloads.split(separator: ",").map {
            guard let w = RecordsWorkload(name: $0.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("unknown workload '\($0)'")
            }
            return w
        }
        return RecordsWorkload.all(scale).filter(named.contains) + named.filter { !RecordsWorkload.all(scale).contains($0) }
    }

    func run() throws {
        let started = Measure.now()
        defer { log("strata-bench records: \(RateFormat.duration(Double(Measure.now() - started) / 1e9)) in all") }
        let scale = try sizes()
        let repeats = repeatCount
        let engines = try parsedEngines()
        let workloads = try parsedWorkloads(scale)
        let root = try Measure.makeWorkDirectory(under: dir)
        defer {
            if keep { log("work files kept in \(root)") } else { try? FileManager.default.removeItem(atPath: root) }
        }
        let scaleJSON = String(decoding: try JSONEncoder().encode(scale), as: UTF8.self)
        func child(_ engine: RecordsEngineName, _ w: RecordsWorkload, _ dir: String, bulk: String, rep: Int) throws -> RecordsRunResult {
            try ChildProcess.launch(Measure.executablePath(), ["records-run", "--engine", engine.rawValue, "--workload", w.name,
                                                               "--dir", dir, "--bulk-store", bulk, "--scale", scaleJSON],
                                    as: RecordsRunResult.self, label: "[\(rep)/\(repeats)] \(w.name) \(engine.rawValue)")
        }

        var runs: [String: [RecordsRunResult]] = [:]
        var failures: [String: String] = [:]
        var checks: [StoreCheckOutcome] = []
        func key(_ w: RecordsWorkload, _ e: RecordsEngineName) -> String { "\(w.name)/\(e.rawValue)" }
        func noteCheck(_ rep: Int, _ r: RecordsRunResult, prepare: Bool = false) {
            if r.checkClean != nil { checks.append(StoreCheckOutcome(r, workload: r.workload, repeatIndex: rep, prepare: prepare)) }
        }

        for rep in 1...repeats {
            let repDir = root + "/rep\(rep)"
            let order = (0..<engines.count).map { engines[($0 + rep - 1) % engines.count] }
            var bulkReady = false
            for workload in workloads {
                if workload.needsBulkStore && !bulkReady && !workloads.contains(.bulkInsert) {
                    for engine in order {
                        log("[\(rep)/\(repeats)] (prepare) bulkinsert \(engine.rawValue)")
                        if let r = try? child(engine, .bulkInsert, "\(repDir)/\(engine.rawValue)/bulkinsert", bulk: "", rep: rep) {
                            noteCheck(rep, r, prepare: true)
                        }
                    }
                }
                bulkReady = bulkReady || workload == .bulkInsert || workload.needsBulkStore
                var digests: [(RecordsEngineName, RecordsDigest)] = []
                for engine in order {
                    let engineDir = "\(repDir)/\(engine.rawValue)"
                    do {
                        var r = try child(engine, workload, "\(engineDir)/\(workload.name)", bulk: "\(engineDir)/bulkinsert", rep: rep)
                        r.repeatIndex = rep
                        runs[key(workload, engine), default: []].append(r)
                        noteCheck(rep, r)
                        // A run cut short by its time window holds fewer items; it checked its store itself.
                        if r.timeWindowSeconds == nil { digests.append((engine, r.digest)) }
                        log(r.progressLine(workload: r.workload, repeatIndex: rep, repeats: repeats))
                    } catch {
                        failures[key(workload, engine)] = "\(error)"
                        log("[\(rep)/\(repeats)] \(workload.name) \(engine.rawValue) FAILED: \(error)")
                    }
                }
                for problem in Self.disagreements(workload, digests, scale) {
                    failures[key(workload, digests[0].0)] = problem
                    log("[\(rep)/\(repeats)] \(workload.name): \(problem)")
                }
            }
            if !keep { try? FileManager.default.removeItem(atPath: repDir) }
        }

        var rows: [ReportRow<RecordsRunResult>] = []
        for workload in workloads {
            for engine in engines {
                rows.append(ReportRow(workload: workload.name, engine: engine.rawValue, runs: runs[key(workload, engine)] ?? [],
                                      failure: failures[key(workload, engine)]))
            }
        }
        var report = Report(
            title: "strata-bench records: \(scale.lists) lists × \(scale.itemsPerList) items; \(scale.inserts) inserts into "
                + "lists of \(scale.listSizes.map(String.init).joined(separator: ", ")); \(scale.moves) moves; "
                + "\(scale.renames) renames of lists with \(scale.fanoutItems) items; \(scale.queries) queries; "
                + "\(scale.batch) operations per transaction (renames: one each); median of \(repeats) run(s)"
                + (scale == RecordsScale.preset(self.scale) ? "; \(self.scale.rawValue) scale" : ""),
            configurations: engines.map { $0 == .strata ? StrataRecordsEngine.configuration : SQLiteRecordsEngine.configuration($0) },
            notes: ["ops/s counts rows inserted (bulkinsert: lists and items), items inserted, items moved, lists renamed, "
                    + "queries answered; p50/p99 per transaction (queries: per \(scale.batch) queries in one read transaction)",
                    "setup of insert_list<N> and renamefanout is untimed (SQLite: rows loaded without triggers, derived "
                    + "columns filled in one UPDATE, triggers created after)"]
                + (scale.recountWindow > 0 && engines.contains(.sqliteRecount) && scale.listSizes.contains { $0 >= scale.windowFromListSize }
                    ? ["sqlite-recount's insert_list<N> for N ≥ \(scale.windowFromListSize) runs for a \(RateFormat.duration(scale.recountWindow)) "
                       + "time window (whole transactions) instead of \(scale.inserts) inserts: its recount is O(list size) per "
                       + "insert; ops/s is the inserts done ÷ the time, the store is checked against what was inserted"]
                    : []),
            rows: rows, subject: RecordsEngineName.strata.rawValue,
            baselines: engines.filter { $0 != .strata }.map(\.rawValue), checks: checks,
            parameters: ["lists": scale.lists, "items_per_list": scale.itemsPerList, "repeats": repeats])
        addSummary(&report, rows, scale, engines)
        report.printTable()
        if let json { try report.writeJSON(to: json) }
        if let html = self.report { try HTMLReport(sections: [ReportSection(report)]).write(to: html) }
        if !failures.isEmpty || checks.contains(where: { !$0.clean }) { throw ExitCode(1) }
    }

    /// Engines must agree on what their stores hold (or what the queries found), and each
    /// store must be internally right: every item's copy of its list's name, every search name.
    static func disagreements(_ w: RecordsWorkload, _ digests: [(RecordsEngineName, RecordsDigest)], _ scale: RecordsScale) -> [String] {
        var problems: [String] = []
        if let first = digests.first {
            for (engine, d) in digests.dropFirst() where d != first.1 {
                problems.append("engines disagree: \(first.0.rawValue) has \(first.1); \(engine.rawValue) has \(d)")
            }
        }
        if w.leavesStore {
            for (engine, d) in digests where d.copiesRight != d.items || d.searchNamesRight != d.lists || d.itemCountSum != d.items {
                problems.append("\(engine.rawValue): derived values wrong: \(d)")
            }
        }
        return problems
    }

    /// The targets, from the medians: bulk insert against incremental triggers, the
    /// growth of the per-insert cost from the smallest to the largest list, indexed fetches.
    private func addSummary(_ report: inout Report<RecordsRunResult>, _ rows: [ReportRow<RecordsRunResult>],
                            _ scale: RecordsScale, _ engines: [RecordsEngineName]) {
        func ops(_ w: RecordsWorkload, _ e: RecordsEngineName) -> Double? {
            rows.first { $0.workload == w.name && $0.engine == e.rawValue }?.opsPerSecond
        }
        func ratio(_ a: Double?, _ b: Double?) -> Double? { a.flatMap { a in b.map { a / $0 } } }
        func text(_ x: Double?) -> String { x.map { String(format: "%.2f×", $0) } ?? "-" }
        if let small = scale.listSizes.min(), let large = scale.listSizes.max(), small != large {
            var growth: [String: Double?] = [:]
            var parts: [String] = []
            for e in engines {
                // Cost per insert is 1 / (ops/s): the growth is small-list ops/s ÷ large-list ops/s.
                let g = ratio(ops(.insertIntoList(size: small), e), ops(.insertIntoList(size: large), e))
                growth[e.rawValue] = g
                parts.append("\(e.rawValue) \(text(g))")
            }
            report.summaryFigures["insert_cost_growth"] = growth
            report.summary.append("per-insert cost, lists of \(large) ÷ lists of \(small): " + parts.joined(separator: ", ")
                                  + " (target for strata: ≤ 1.5×)")
        }
        // The targets are judged on the table's ratios: medians of paired runs, counted to close.
        func paired(_ w: RecordsWorkload, _ baseline: RecordsEngineName) -> Double? {
            report.rows.first { $0.workload == w.name && $0.engine == RecordsEngineName.strata.rawValue }?
                .ratios?[baseline.rawValue]?.median
        }
        let bulk = paired(.bulkInsert, .sqliteIncremental)
        report.summary.append("bulkinsert, strata ÷ sqlite-incremental: \(text(bulk)) (target ≥ 3×)")
        let fetch = [RecordsEngineName.sqliteIncremental, .sqliteRecount].compactMap { paired(.fetchIndexed, $0) }.min()
        report.summary.append("fetchindexed, strata ÷ sqlite (the slower ratio of the two): \(text(fetch)) (target ≥ 2×)")
    }
}

/// `strata-bench records-run`: one records workload on one engine, in a process of its own,
/// printing one JSON line. Hidden: `records` runs it.
struct RecordsRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "records-run",
        abstract: "Run one records workload on one engine and print its result as JSON (used by `records`).",
        shouldDisplay: false)

    @Option var engine: RecordsEngineName
    @Option var workload: String
    @Option(help: "Directory this run owns.") var dir: String
    @Option(help: "Directory holding the store bulkinsert left.") var bulkStore: String?
    @Option(help: "The benchmark's sizes, as JSON.") var scale: String

    func run() throws {
        let result: RecordsRunResult
        do {
            let scale = try JSONDecoder().decode(RecordsScale.self, from: Data(scale.utf8))
            guard let w = RecordsWorkload(name: workload) else { throw BenchError("unknown workload \(workload)") }
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let bulk = bulkStore.flatMap { $0.isEmpty ? nil : $0 }
            switch engine {
            case .strata:
                result = try RecordsRunner<StrataRecordsEngine>(engineName: engine, scale: scale, directory: dir, bulkStore: bulk).run(w)
            case .sqliteRecount, .sqliteIncremental:
                result = try RecordsRunner<SQLiteRecordsEngine>(engineName: engine, scale: scale, directory: dir, bulkStore: bulk).run(w)
            }
        } catch {
            let line = try JSONEncoder().encode(ChildFailure(error: "\(error)"))
            FileHandle.standardOutput.write(line + Data("\n".utf8))
            throw ExitCode(1)
        }
        FileHandle.standardOutput.write(try JSONEncoder().encode(result) + Data("\n".utf8))
    }
}
