import ArgumentParser
import Foundation

/// `strata-bench kv`: LevelDB-style key-value workloads on Strata, SQLite and LMDB.
///
/// Every (repeat, workload, engine) runs in a child process (`kv-run`); engines alternate
/// within each workload, and the engine that goes first rotates each repeat, so slow drift of
/// the machine (page cache, thermal, other load) does not favour one engine (``PairedRuns``).
struct KVCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kv",
        abstract: "Key-value workloads (db_bench style) on Strata, SQLite and LMDB.")

    @Option(help: "Sizes and repeats: default (what make bench runs, about 1 minute) or full (the issue's sizes, 3 runs). Size options override.")
    var scale: BenchScale = .default
    @Option(help: "Number of keys (default scale: \(KVScale.default.count); full: \(KVScale.full.count)).") var count: Int?
    @Option(name: .customLong("repeat"), help: "Runs of each workload per engine, the median reported (default scale: \(KVScale.default.repeats); full: \(KVScale.full.repeats)).")
    var repeats: Int?
    @OptionGroup var options: BenchOptions
    @Option(help: "Comma-separated engines: strata, sqlite, lmdb.") var engines: String = "strata,sqlite,lmdb"
    @Option(help: "Comma-separated workloads.")
    var workloads: String = KVWorkload.allCases.map(\.rawValue).joined(separator: ",")
    @Option(help: "Commits in fillsync (default scale: \(KVScale.default.syncCommits); full: \(KVScale.full.syncCommits)).")
    var syncCommits: Int?

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

    private func parsedEngines() throws -> [KVEngineName] {
        try parseList(engines, of: "engine", KVEngineName.init(rawValue:))
    }

    /// The selected workloads, in canonical order (fillrandom before the ones that read its store).
    private func parsedWorkloads() throws -> [KVWorkload] {
        let named = try parseList(workloads, of: "workload", KVWorkload.init(rawValue:))
        return KVWorkload.allCases.filter(named.contains)
    }

    func run() throws {
        let sizes = sizes
        let engines = try parsedEngines()
        let workloads = try parsedWorkloads()
        let benchmark = KVBenchmark(count: sizes.count, syncCommits: sizes.syncCommits)
        let failed = try options.withWorkDirectory("kv") { root in
            let strace = Measure.which("strace")
            let pass = PairedRuns(benchmark: benchmark, engines: engines, workloads: workloads, repeats: sizes.repeats,
                                  root: root, keep: options.keep).run()
            var rows = pass.rows
            if workloads.contains(.fillsync) {
                let perCommit = syncsPerCommit(rows, engines, strace.map { KVSyncCount(strace: $0, benchmark: benchmark) },
                                               dir: root + "/fillsync-strace")
                for i in rows.indices where rows[i].workload == KVWorkload.fillsync.name {
                    rows[i].fsyncsPerCommit = KVEngineName(rawValue: rows[i].engine).flatMap { perCommit[$0] }
                }
            }
            let report = Report(
                title: "strata-bench kv: \(sizes.count) keys (16 B) / values (100 B, compressible to ~50%), "
                    + "median of \(sizes.repeats) run(s), 1,000 ops per transaction, fillsync = \(sizes.syncCommits) single-put commits"
                    + (sizes == KVScale.preset(scale) ? "; \(scale.rawValue) scale" : ""),
                configurations: engines.map(\.configuration), notes: notes(engines, workloads, strace: strace), rows: rows,
                subject: KVEngineName.strata.rawValue, baselines: engines.filter { $0 != .strata }.map(\.rawValue),
                checks: pass.checks, parameters: ["count": sizes.count, "repeats": sizes.repeats])
            report.printTable()
            if let json = options.json { try report.writeJSON(to: json) }
            try options.writePage([ReportSection(report)])
            return pass.failed
        }
        // Everything is printed first; then a failed run or an unclean store fails the command.
        if failed { throw ExitCode(1) }
    }

    /// fsync/commit in fillsync per engine: Strata's own count, from its last run; SQLite's and
    /// LMDB's counted by `strace` in a run of their own (sync counts do not vary between runs:
    /// counted once), when it is installed.
    private func syncsPerCommit(_ rows: [ReportRow<KVRunDetails>], _ engines: [KVEngineName], _ count: KVSyncCount?,
                                dir: String) -> [KVEngineName: Double] {
        var perCommit: [KVEngineName: Double] = [:]
        for engine in engines {
            if engine == .strata {
                let run = rows.first { $0.workload == KVWorkload.fillsync.name && $0.engine == engine.rawValue }?.runs.last
                if let syncs = run?.details.ownSyncs, let commits = run?.details.commits {
                    perCommit[engine] = Double(syncs) / Double(commits)
                }
                continue
            }
            guard let count else { continue }
            do {
                if let s = try count.syncsPerCommit(engine, dir: "\(dir)/\(engine.rawValue)") {
                    perCommit[engine] = s
                    log("fillsync \(engine.rawValue) under strace: " + String(format: "%.3f syncs/commit", s))
                }
            } catch {
                log("fillsync \(engine.rawValue): strace count failed: \(error)")
            }
        }
        return perCommit
    }

    /// How the sync counts were taken, for the report's header.
    private func notes(_ engines: [KVEngineName], _ workloads: [KVWorkload], strace: String?) -> [String] {
        guard workloads.contains(.fillsync) else { return [] }
        var notes = [strace == nil
            ? "strace not found: fsync/commit for sqlite and lmdb not counted (null)"
            : "fsync/commit: strata = its statistics.syncCount; sqlite and lmdb = fsync+fdatasync(+msync, "
                + "sync_file_range) counted by strace -f -c in a separate untimed fillsync run"]
        if engines.contains(.lmdb) {
            notes.append("lmdb writes its meta page through an O_DSYNC descriptor; that flush is not a sync syscall "
                         + "and is not counted")
        }
        return notes
    }
}
