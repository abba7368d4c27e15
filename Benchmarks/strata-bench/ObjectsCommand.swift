import ArgumentParser
import Foundation

/// `strata-bench objects`: Strata's object layer against the record layer alone (what objects
/// cost) and GRDB 7 (what a Swift user on Linux picks today) twice, through `Codable` records
/// (`grdb`, the path its guides start with) and at its best (`grdb-rows`: hand-written row
/// decoding and encoding, cached statements), on the same data.
///
/// As in `records`, every (repeat, workload, engine) runs in a child process (`objects-run`),
/// so each run's peak RSS is its own; the engines alternate within each workload and the first
/// engine rotates each repeat. Engines must agree on what they read and on what their stores
/// hold afterwards; a disagreement fails the run.
struct ObjectsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "objects",
        abstract: "Objects: Strata's object layer vs its record layer and GRDB 7.")

    @Option(help: "Sizes and repeats: default (what make bench runs: the issue's sizes, one run, about 30 s) or full (the same sizes, 3 runs). Size options override.")
    var scale: BenchScale = .default
    @Option(name: .customLong("repeat"), help: "Runs of each workload per engine, the median reported (default scale: 1; full: 3).")
    var repeats: Int?
    @Option(help: "Also write the results as JSON to this file.") var json: String?
    @Option(help: "Also write the results as one HTML page (bar chart and table) to this file.") var report: String?
    @Option(help: "Comma-separated engines: objects, records, grdb, grdb-rows.")
    var engines: String = ObjectsEngineName.allCases.map(\.rawValue).joined(separator: ",")
    @Option(help: "Comma-separated workloads (default: all): \(ObjectsWorkload.allCases.map(\.rawValue).joined(separator: ", ")).")
    var workloads: String?
    @Option(help: "Put work files in a fresh directory under this one (default: /tmp).") var dir: String?
    @Flag(help: "Keep the work files.") var keep = false

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
        try engines.split(separator: ",").map {
            guard let e = ObjectsEngineName(rawValue: $0.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("unknown engine '\($0)'")
            }
            return e
        }
    }

    /// The selected workloads, in canonical order (insert before the ones that read its store).
    private func parsedWorkloads() throws -> [ObjectsWorkload] {
        guard let workloads else { return ObjectsWorkload.allCases }
        let named = try workloads.split(separator: ",").map {
            guard let w = ObjectsWorkload(rawValue: $0.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("unknown workload '\($0)'")
            }
            return w
        }
        return ObjectsWorkload.allCases.filter(named.contains)
    }

    /// Items of the second pass (insert, fetchall and traverse again, with this many items):
    /// the option, else the full scale's 1,000,000; none at the default scale.
    var largeItemCount: Int? { largeItems ?? (scale == .full ? 1_000_000 : nil) }

    /// The workloads the second pass runs: those whose cost grows with the store.
    static let growthWorkloads: [ObjectsWorkload] = [.insert, .fetchall, .traverse]

    func run() throws {
        let started = Measure.now()
        defer { log("strata-bench objects: \(RateFormat.duration(Double(Measure.now() - started) / 1e9)) in all") }
        let scale = sizes()
        let engines = try parsedEngines()
        let workloads = try parsedWorkloads()
        let root = try Measure.makeWorkDirectory(under: dir)
        defer {
            if keep { log("work files kept in \(root)") } else { try? FileManager.default.removeItem(atPath: root) }
        }
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
        if let json { try Self.writeJSON(passes.map { ($0.report, $0.runs) }, to: json) }
        if let html = self.report { try HTMLReport(sections: passes.map { ReportSection($0.report) }).write(to: html) }
        if passes.contains(where: \.failed) { throw ExitCode(1) }
    }

    /// What one pass over the workloads gave: its report, every run by "workload/engine", and
    /// whether a run failed, engines disagreed or a store did not check clean.
    struct Pass {
        var report: Report<ObjectsRunResult>
        var runs: [String: [ObjectsRunResult]]
        var failed: Bool
    }

    /// Runs `workloads` on `engines` at `scale`, every repeat, each run in a child process under
    /// `root`. `named`: what sets a second pass apart, in its log lines and title.
    func runPass(_ scale: ObjectsScale, _ workloads: [ObjectsWorkload], _ engines: [ObjectsEngineName], root: String,
                 named: String?) throws -> Pass {
        let repeats = repeatCount
        let tag = named.map { " (\($0))" } ?? ""
        let scaleJSON = String(decoding: try JSONEncoder().encode(scale), as: UTF8.self)
        func child(_ engine: ObjectsEngineName, _ w: ObjectsWorkload, _ dir: String, insertStore: String, rep: Int) throws -> ObjectsRunResult {
            try ChildProcess.launch(Measure.executablePath(), ["objects-run", "--engine", engine.rawValue, "--workload", w.rawValue,
                                                               "--dir", dir, "--insert-store", insertStore, "--scale", scaleJSON],
                                    as: ObjectsRunResult.self, label: "[\(rep)/\(repeats)]\(tag) \(w.rawValue) \(engine.rawValue)")
        }

        var runs: [String: [ObjectsRunResult]] = [:]
        var failures: [String: String] = [:]
        var checks: [StoreCheckOutcome] = []
        func key(_ w: ObjectsWorkload, _ e: ObjectsEngineName) -> String { "\(w.rawValue)/\(e.rawValue)" }
        func noteCheck(_ rep: Int, _ r: ObjectsRunResult, prepare: Bool = false) {
            if r.checkClean != nil { checks.append(StoreCheckOutcome(r, workload: r.workload, repeatIndex: rep, prepare: prepare)) }
        }

        for rep in 1...repeats {
            let repDir = root + "/rep\(rep)"
            let order = (0..<engines.count).map { engines[($0 + rep - 1) % engines.count] }
            if !workloads.contains(.insert) && workloads.contains(where: \.needsInsertStore) {
                for engine in order {
                    log("[\(rep)/\(repeats)]\(tag) (prepare) insert \(engine.rawValue)")
                    do {
                        noteCheck(rep, try child(engine, .insert, "\(repDir)/\(engine.rawValue)/insert", insertStore: "", rep: rep), prepare: true)
                    } catch {
                        log("[\(rep)/\(repeats)]\(tag) (prepare) insert \(engine.rawValue) FAILED: \(error)")
                    }
                }
            }
            for workload in workloads {
                var results: [(ObjectsEngineName, ObjectsRunResult)] = []
                for engine in order where workload.runs(on: engine) {
                    let engineDir = "\(repDir)/\(engine.rawValue)"
                    do {
                        var r = try child(engine, workload, "\(engineDir)/\(workload.rawValue)", insertStore: "\(engineDir)/insert", rep: rep)
                        r.repeatIndex = rep
                        if let earlier = runs[key(workload, engine)]?.first, earlier.digest != r.digest || earlier.store != r.store {
                            throw BenchError("repeat \(rep) read \(r.digest), store \(r.store.map(\.description) ?? "-"); "
                                             + "repeat 1 read \(earlier.digest), store \(earlier.store.map(\.description) ?? "-")")
                        }
                        runs[key(workload, engine), default: []].append(r)
                        noteCheck(rep, r)
                        results.append((engine, r))
                        log(r.progressLine(workload: r.workload + tag, repeatIndex: rep, repeats: repeats))
                    } catch {
                        failures[key(workload, engine)] = "\(error)"
                        log("[\(rep)/\(repeats)]\(tag) \(workload.rawValue) \(engine.rawValue) FAILED: \(error)")
                    }
                }
                for problem in Self.disagreements(workload, results, scale) {
                    failures[key(workload, results[0].0)] = problem
                    log("[\(rep)/\(repeats)]\(tag) \(workload.rawValue): \(problem)")
                }
            }
            if !keep { try? FileManager.default.removeItem(atPath: repDir) }
        }

        var rows: [ReportRow<ObjectsRunResult>] = []
        for workload in workloads {
            for engine in engines where workload.runs(on: engine) {
                rows.append(ReportRow(workload: workload.rawValue, engine: engine.rawValue, runs: runs[key(workload, engine)] ?? [],
                                      failure: failures[key(workload, engine)]))
            }
        }
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
            rows: rows, subject: ObjectsEngineName.objects.rawValue,
            baselines: engines.filter { $0 != .objects }.map(\.rawValue), checks: checks,
            parameters: ["items": scale.items, "items_per_list": scale.itemsPerList, "repeats": repeats])
        ObjectsSummary(rows: rows, engines: engines).add(to: &report)
        return Pass(report: report, runs: runs, failed: !failures.isEmpty || checks.contains(where: { !$0.clean }))
    }

    /// The first pass's report as JSON plus `digests`: workload → engine → what its first run
    /// read and what its store held after (hex checksums, counts), so a reader can see the
    /// engines agree. A second pass (the growth workloads at more items) goes under `growth`,
    /// in the same form.
    static func writeJSON(_ passes: [(Report<ObjectsRunResult>, [String: [ObjectsRunResult]])], to path: String) throws {
        func object(_ report: Report<ObjectsRunResult>, _ runs: [String: [ObjectsRunResult]]) throws -> [String: Any] {
            guard var object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(report)) as? [String: Any] else {
                throw BenchError("the report did not encode as an object")
            }
            func describe(_ d: ObjectsDigest) -> [String: Any] {
                ["objects": d.objects, "lists": d.lists, "checksum": String(d.checksum, radix: 16)]
            }
            var digests: [String: [String: Any]] = [:]
            for (_, list) in runs {
                guard let r = list.first else { continue }
                var entry: [String: Any] = ["read": describe(r.digest)]
                if let store = r.store { entry["store"] = describe(store) }
                digests[r.workload, default: [:]][r.engine] = entry
            }
            object["digests"] = digests
            return object
        }
        guard let first = passes.first else { return }
        var top = try object(first.0, first.1)
        if passes.count > 1 { top["growth"] = try object(passes[1].0, passes[1].1) }
        try JSONSerialization.data(withJSONObject: top, options: [.prettyPrinted, .sortedKeys])
            .write(to: URL(fileURLWithPath: path))
    }

    static func configuration(_ e: ObjectsEngineName) -> String {
        switch e {
        case .objects: return StrataObjectsEngine.configuration
        case .records: return RecordLayerObjectsEngine.configuration
        case .grdb: return GRDBObjectsEngine.configuration
        case .grdbRows: return GRDBRowsObjectsEngine.configuration
        }
    }

    /// Engines must read the same objects and leave the same stores; the insert store must hold
    /// every item and list.
    static func disagreements(_ w: ObjectsWorkload, _ results: [(ObjectsEngineName, ObjectsRunResult)], _ scale: ObjectsScale) -> [String] {
        var problems: [String] = []
        guard let first = results.first else { return [] }
        for (engine, r) in results.dropFirst() {
            if r.digest != first.1.digest {
                problems.append("engines read different data: \(first.0.rawValue) \(first.1.digest); \(engine.rawValue) \(r.digest)")
            }
            if r.store != first.1.store {
                problems.append("stores differ: \(first.0.rawValue) \(first.1.store.map(\.description) ?? "-"); "
                                + "\(engine.rawValue) \(r.store.map(\.description) ?? "-")")
            }
        }
        if w == .insert {
            for (engine, r) in results where r.store?.objects != scale.items || r.store?.lists != scale.lists {
                problems.append("\(engine.rawValue): the store holds \(r.store.map(\.description) ?? "nothing")")
            }
        }
        return problems
    }
}

/// `strata-bench objects-run`: one objects workload on one engine, in a process of its own,
/// printing one JSON line. Hidden: `objects` runs it.
struct ObjectsRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "objects-run",
        abstract: "Run one objects workload on one engine and print its result as JSON (used by `objects`).",
        shouldDisplay: false)

    @Option var engine: ObjectsEngineName
    @Option var workload: String
    @Option(help: "Directory this run owns.") var dir: String
    @Option(help: "Directory holding the store insert left.") var insertStore: String?
    @Option(help: "The benchmark's sizes, as JSON.") var scale: String

    func run() throws {
        let result: ObjectsRunResult
        do {
            let scale = try JSONDecoder().decode(ObjectsScale.self, from: Data(scale.utf8))
            guard let w = ObjectsWorkload(rawValue: workload) else { throw BenchError("unknown workload \(workload)") }
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let data = ObjectsData(scale: scale)
            let store = insertStore.flatMap { $0.isEmpty ? nil : $0 }
            switch engine {
            case .objects:
                result = try ObjectsRunner<StrataObjectsEngine>(engineName: engine, data: data, directory: dir, insertStore: store).run(w)
            case .records:
                result = try ObjectsRunner<RecordLayerObjectsEngine>(engineName: engine, data: data, directory: dir, insertStore: store).run(w)
            case .grdb:
                result = try ObjectsRunner<GRDBObjectsEngine>(engineName: engine, data: data, directory: dir, insertStore: store).run(w)
            case .grdbRows:
                result = try ObjectsRunner<GRDBRowsObjectsEngine>(engineName: engine, data: data, directory: dir, insertStore: store).run(w)
            }
        } catch {
            let line = try JSONEncoder().encode(ChildFailure(error: "\(error)"))
            FileHandle.standardOutput.write(line + Data("\n".utf8))
            throw ExitCode(1)
        }
        FileHandle.standardOutput.write(try JSONEncoder().encode(result) + Data("\n".utf8))
    }
}
