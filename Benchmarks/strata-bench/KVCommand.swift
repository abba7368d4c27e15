import ArgumentParser
import Foundation

/// `strata-bench kv`: LevelDB-style key-value workloads on Strata, SQLite and LMDB.
///
/// Every (repeat, workload, engine) runs in a child process (`kv-run`); engines alternate
/// within each workload, and the engine that goes first rotates each repeat, so slow drift of
/// the machine (page cache, thermal, other load) does not favour one engine.
struct KVCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kv",
        abstract: "Key-value workloads (db_bench style) on Strata, SQLite and LMDB.")

    @Option(help: "Sizes and repeats: default (what make bench runs, about 1 minute) or full (the issue's sizes, 3 runs). Size options override.")
    var scale: BenchScale = .default
    @Option(help: "Number of keys (default scale: \(KVScale.default.count); full: \(KVScale.full.count)).") var count: Int?
    @Option(name: .customLong("repeat"), help: "Runs of each workload per engine, the median reported (default scale: \(KVScale.default.repeats); full: \(KVScale.full.repeats)).")
    var repeats: Int?
    @Option(help: "Also write the results as JSON to this file.") var json: String?
    @Option(help: "Also write the results as one HTML page (bar chart and table) to this file.") var report: String?
    @Option(help: "Comma-separated engines: strata, sqlite, lmdb.") var engines: String = "strata,sqlite,lmdb"
    @Option(help: "Comma-separated workloads.")
    var workloads: String = Workload.allCases.map(\.rawValue).joined(separator: ",")
    @Option(help: "Put work files in a fresh directory under this one (default: /tmp).") var dir: String?
    @Option(help: "Commits in fillsync (default scale: \(KVScale.default.syncCommits); full: \(KVScale.full.syncCommits)).")
    var syncCommits: Int?
    @Flag(help: "Keep the work files.") var keep = false

    /// The scale's sizes with every size option given on the command line in their place.
    var sizes: KVScale {
        var s = KVScale.preset(scale)
        if let count { s.count = count }
        if let repeats { s.repeats = repeats }
        if let syncCommits { s.syncCommits = syncCommits }
        return s
    }

    func validate() throws {
        let sizes = sizes
        guard sizes.count >= 2 else { throw ValidationError("--count must be at least 2") }
        guard sizes.repeats >= 1 else { throw ValidationError("--repeat must be at least 1") }
        guard sizes.syncCommits >= 1 else { throw ValidationError("--sync-commits must be at least 1") }
        _ = try parsedEngines()
        _ = try parsedWorkloads()
    }

    private func parsedEngines() throws -> [EngineName] {
        try engines.split(separator: ",").map {
            guard let e = EngineName(rawValue: $0.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("unknown engine '\($0)'")
            }
            return e
        }
    }

    /// The selected workloads, in canonical order (fillrandom before the ones that read its store).
    private func parsedWorkloads() throws -> [Workload] {
        let named = try workloads.split(separator: ",").map {
            guard let w = Workload(rawValue: $0.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("unknown workload '\($0)'")
            }
            return w
        }
        return Workload.allCases.filter(named.contains)
    }

    func run() throws {
        let started = Measure.now()
        defer { log("strata-bench kv: \(RateFormat.duration(Double(Measure.now() - started) / 1e9)) in all") }
        let (count, repeats, syncCommits) = (sizes.count, sizes.repeats, sizes.syncCommits)
        let engines = try parsedEngines()
        let workloads = try parsedWorkloads()
        let root = try Measure.makeWorkDirectory(under: dir)
        defer {
            if keep { log("work files kept in \(root)") } else { try? FileManager.default.removeItem(atPath: root) }
        }
        let strace = Measure.which("strace")
        let child = ChildProcess(executable: Measure.executablePath(), count: count, syncCommits: syncCommits,
                                 strace: strace)
        var notes: [String] = []
        if workloads.contains(.fillsync) {
            notes.append(strace == nil
                ? "strace not found: fsync/commit for sqlite and lmdb not counted (null)"
                : "fsync/commit: strata = its statistics.syncCount; sqlite and lmdb = fsync+fdatasync(+msync, "
                    + "sync_file_range) counted by strace -f -c in a separate untimed fillsync run")
            if engines.contains(.lmdb) {
                notes.append("lmdb writes its meta page through an O_DSYNC descriptor; that flush is not a sync syscall "
                             + "and is not counted")
            }
        }

        var runs: [String: [RunResult]] = [:]
        var failures: [String: String] = [:]
        var syncsPerCommit: [EngineName: Double] = [:]
        var checks: [StoreCheckOutcome] = []
        func noteCheck(_ rep: Int, _ r: RunResult, prepare: Bool = false) {
            guard r.checkClean != nil else { return }
            checks.append(StoreCheckOutcome(r, workload: r.workload.rawValue, repeatIndex: rep, prepare: prepare))
        }
        func key(_ w: Workload, _ e: EngineName) -> String { "\(w.rawValue)/\(e.rawValue)" }

        for rep in 1...repeats {
            let repDir = root + "/rep\(rep)"
            // Rotate which engine goes first each repeat.
            let order = (0..<engines.count).map { engines[($0 + rep - 1) % engines.count] }
            var filled = workloads.contains(.fillrandom)
            for workload in workloads {
                if workload.needsFilledStore && !filled {
                    // The workload reads fillrandom's store but fillrandom was not selected:
                    // fill one, untimed, in a run whose result is dropped.
                    for engine in order {
                        log("[\(rep)/\(repeats)] (prepare) fillrandom \(engine.rawValue)")
                        if let r = try? child.run(engine, .fillrandom, dir: "\(repDir)/\(engine.rawValue)/fillrandom",
                                                  filledStore: "", label: "[\(rep)/\(repeats)] (prepare) fillrandom \(engine.rawValue)") {
                            noteCheck(rep, r, prepare: true)
                        }
                    }
                    filled = true
                }
                for engine in order {
                    let engineDir = "\(repDir)/\(engine.rawValue)"
                    do {
                        var r = try child.run(engine, workload, dir: "\(engineDir)/\(workload.rawValue)",
                                              filledStore: "\(engineDir)/fillrandom",
                                              label: "[\(rep)/\(repeats)] \(workload.rawValue) \(engine.rawValue)")
                        r.repeatIndex = rep
                        runs[key(workload, engine), default: []].append(r)
                        noteCheck(rep, r)
                        log(r.progressLine(workload: r.workload.rawValue, repeatIndex: rep, repeats: repeats))
                    } catch {
                        failures[key(workload, engine)] = "\(error)"
                        log("[\(rep)/\(repeats)] \(workload.rawValue) \(engine.rawValue) FAILED: \(error)")
                    }
                    if workload == .fillsync {
                        if engine == .strata, let r = runs[key(workload, engine)]?.last,
                           let syncs = r.ownSyncs, let commits = r.commits {
                            syncsPerCommit[engine] = Double(syncs) / Double(commits)
                        } else if engine != .strata, rep == 1 {
                            // Sync counts do not vary between runs: count once.
                            do {
                                if let s = try child.countSyncsPerCommit(engine, dir: "\(engineDir)/fillsync-strace") {
                                    syncsPerCommit[engine] = s
                                    log("[\(rep)/\(repeats)] fillsync \(engine.rawValue) under strace: "
                                        + String(format: "%.3f syncs/commit", s))
                                }
                            } catch {
                                log("fillsync \(engine.rawValue): strace count failed: \(error)")
                            }
                        }
                    }
                }
            }
            if !keep { try? FileManager.default.removeItem(atPath: repDir) }
        }

        var rows: [ReportRow<RunResult>] = []
        for workload in workloads {
            for engine in engines {
                rows.append(ReportRow(workload: workload.rawValue, engine: engine.rawValue,
                                      runs: runs[key(workload, engine)] ?? [],
                                      fsyncsPerCommit: workload == .fillsync ? syncsPerCommit[engine] : nil,
                                      failure: failures[key(workload, engine)]))
            }
        }
        let report = Report(
            title: "strata-bench kv: \(count) keys (16 B) / values (100 B, compressible to ~50%), "
                + "median of \(repeats) run(s), 1,000 ops per transaction, fillsync = \(syncCommits) single-put commits"
                + (sizes == KVScale.preset(scale) ? "; \(scale.rawValue) scale" : ""),
            configurations: engines.map(\.configuration), notes: notes, rows: rows,
            subject: EngineName.strata.rawValue, baselines: engines.filter { $0 != .strata }.map(\.rawValue),
            checks: checks, parameters: ["count": count, "repeats": repeats])
        report.printTable()
        if let json { try report.writeJSON(to: json) }
        if let html = self.report { try HTMLReport(sections: [ReportSection(report)]).write(to: html) }
        // Everything is printed first; then a failed run or an unclean store fails the command.
        if !failures.isEmpty || checks.contains(where: { !$0.clean }) { throw ExitCode(1) }
    }
}
