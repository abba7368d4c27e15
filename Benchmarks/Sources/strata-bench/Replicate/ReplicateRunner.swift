import Foundation

/// The phases of `strata-bench replicate`, on one store and two fresh databases of a throwaway
/// PostgreSQL cluster: the grouped one (pushed with `--batch N`) and the other (`--batch 1`).
///
/// 1. `copy`: the store is filled, then the first push into each database copies it.
/// 2. `push`: the writer commits the small transactions, then one push into each database
///    applies them, the grouped one first: the same transactions, so the two rows show what
///    grouping buys.
/// 3. `follow`: `strata replicate --follow` on the grouped database while the writer commits
///    at a steady rate (``ReplicateFollow``).
///
/// After each push, PostgreSQL must equal the store on the digest (``ReplicaDigest``).
struct ReplicateRunner {
    let scale: ReplicateScale
    /// Store transactions per PostgreSQL transaction in the grouped database's pushes.
    let batch: Int
    let tool: String
    /// The work directory: the store goes there.
    let directory: String

    /// What the phases gave.
    struct Outcome {
        /// `copy`, `push` (each engine: `batch-N`, `batch-1`), then `follow` (`batch-N`).
        var rows: [ReportRow<ReplicateRunDetails>]
        /// Filling the store, and committing the `push` phase's transactions (untimed parts).
        var populateSeconds: Double
        var commitSeconds: Double
        /// One line per digest comparison.
        var verifications: [String]
        var allEqual: Bool { rows.allSatisfy { $0.runs.allSatisfy(\.details.digestEqual) } }
    }

    /// The engine name of a push with `batch` transactions per PostgreSQL transaction.
    static func engine(_ batch: Int) -> String { "batch-\(batch)" }

    func run() throws -> Outcome {
        log("replicate: starting a throwaway PostgreSQL cluster (initdb, fsync=off)")
        let cluster = try PostgresCluster.shared
        let postgres = PostgresCPU(dataDirectory: cluster.directory + "/data")
        let databases = [(batch: batch, database: try cluster.makeDatabase()),
                         (batch: 1, database: try cluster.makeDatabase())]
        let path = directory + "/replicate.strata"
        let writer = try ReplicateWriter(path: path, seed: scale.seed)
        defer { try? writer.close() }
        var rows: [ReportRow<ReplicateRunDetails>] = []
        var verifications: [String] = []

        /// Compares `database` with the store's `expected` digest, noting the outcome.
        func verify(_ label: String, _ database: String, _ expected: ReplicaDigest) throws -> Bool {
            let found = try ReplicaDigest(database: database, in: cluster)
            let equal = found == expected
            verifications.append(equal ? "\(label): PostgreSQL equals the store (\(expected))"
                                 : "\(label): PostgreSQL DIFFERS from the store: \(found.differences(from: expected))")
            if !equal { log("replicate: \(verifications.last!)") }
            return equal
        }

        /// One-shot pushes into both databases, each a row of `workload`.
        func pushBoth(_ workload: String, expected: ReplicaDigest, copy: Bool) throws {
            for (batch, database) in databases {
                let push = try ReplicatePush.run(tool: tool, store: path, url: database.url, batch: batch,
                                                 password: cluster.password, postgres: postgres)
                guard push.line.copiedAll == copy else {
                    throw BenchError("the \(workload) push into \(database.name) \(copy ? "did not copy" : "copied") the store")
                }
                let label = "\(workload) \(Self.engine(batch))"
                let equal = try verify(label, database.name, expected)
                var core = RunCore(workload: workload, engine: Self.engine(batch), ops: push.line.rows, seconds: push.line.seconds)
                core.peakRSSBytes = push.exit.peakRSSBytes
                core.repeatIndex = 1
                rows.append(ReportRow(workload: workload, engine: Self.engine(batch),
                                      runs: [RunResult(core: core, details: ReplicateRunDetails(push, digestEqual: equal))]))
                log("replicate: \(label): \(RateFormat.count(push.line.transactions)) transactions, "
                    + "\(RateFormat.count(push.line.rows)) rows in \(String(format: "%.2f", push.line.seconds)) s, "
                    + "\(RateFormat.compact(core.opsPerSecond)) rows/s")
            }
        }

        var started = Measure.now()
        try writer.populate(scale)
        let populateSeconds = Double(Measure.now() - started) / 1e9
        log("replicate: filled the store (\(scale.lists) lists, \(scale.items) items, \(scale.tags) tags) in "
            + RateFormat.duration(populateSeconds))
        try pushBoth("copy", expected: try ReplicaDigest(store: writer.store), copy: true)
        // Untimed: the fresh tables vacuumed and analysed now, as autovacuum would soon do anyway,
        // so that first pass does not land in a measured push now and then (on two cores it
        // would take the one the push's other process is waiting for).
        for (_, database) in databases { try cluster.psql("VACUUM ANALYZE", database: database.name) }

        started = Measure.now()
        for _ in 0..<scale.transactions { try writer.commitOne() }
        let commitSeconds = Double(Measure.now() - started) / 1e9
        log("replicate: committed \(scale.transactions) transactions in \(RateFormat.duration(commitSeconds))")
        try pushBoth("push", expected: try ReplicaDigest(store: writer.store), copy: false)

        log("replicate: follow: \(scale.rate) commits/s for \(RateFormat.duration(scale.followSeconds))")
        let grouped = databases[0].database
        let follow = try ReplicateFollow.run(tool: tool, store: path, cluster: cluster, database: grouped, writer: writer,
                                             rate: scale.rate, seconds: scale.followSeconds, postgres: postgres)
        let equal = try verify("follow \(Self.engine(batch))", grouped.name, try ReplicaDigest(store: writer.store))
        var core = RunCore(workload: "follow", engine: Self.engine(batch), ops: follow.pushes.reduce(0) { $0 + $1.rows },
                           seconds: follow.windowSeconds)
        let details = ReplicateRunDetails(follow, digestEqual: equal)
        core.p50Micros = details.lagMedianSeconds.map { $0 * 1e6 }
        core.p99Micros = details.lagP99Seconds.map { $0 * 1e6 }
        core.peakRSSBytes = follow.exit.peakRSSBytes
        core.repeatIndex = 1
        rows.append(ReportRow(workload: "follow", engine: Self.engine(batch), runs: [RunResult(core: core, details: details)]))

        log("replicate: converge: 3 stores, \(scale.rate) commits/s on one for \(RateFormat.duration(scale.followSeconds))")
        let converge = try ReplicateConverge.run(tool: tool, store: path, directory: directory, cluster: cluster,
                                                 database: grouped, writer: writer, rate: scale.rate,
                                                 seconds: scale.followSeconds)
        verifications.append(converge.converged
            ? "converge: the three stores and PostgreSQL hold the same rows (digest \(converge.digests[0]))"
            : "converge: the stores DIFFER: \(converge.digests.joined(separator: " / "))")
        if !converge.converged { log("replicate: \(verifications.last!)") }
        let quantiles = [0.5, 0.9, 0.95, 0.99, 1.0].compactMap { p in
            ReplicateRunDetails.percentile(converge.lags, p).map { "p\(Int(p * 100)) \(String(format: "%.1f", $0 * 1e3)) ms" }
        }
        log("replicate: converge: \(converge.lags.count) commits seen in the second store, lag " + quantiles.joined(separator: ", ")
            + "; \(converge.deadlocks) deadlocks in PostgreSQL")
        var convergeCore = RunCore(workload: "converge", engine: Self.engine(batch), ops: converge.committed,
                                   seconds: converge.windowSeconds)
        convergeCore.p50Micros = converge.lags.isEmpty ? nil : Measure.median(converge.lags) * 1e6
        convergeCore.p99Micros = ReplicateRunDetails.percentile(converge.lags, 0.99).map { $0 * 1e6 }
        convergeCore.repeatIndex = 1
        var convergeDetails = ReplicateRunDetails(transactions: converge.committed, changes: 0, batches: 0, pushes: 0,
                                                  cpu: CPUShares(wallSeconds: converge.windowSeconds, toolSeconds: 0, postgresSeconds: nil,
                                                                  benchSeconds: 0, otherSeconds: nil, cores: MachineCPU.cores),
                                                  digestEqual: converge.converged)
        convergeDetails.committed = converge.committed
        convergeDetails.commitSeconds = converge.commitSeconds
        convergeDetails.lagMedianSeconds = converge.lags.isEmpty ? nil : Measure.median(converge.lags)
        convergeDetails.lagP99Seconds = ReplicateRunDetails.percentile(converge.lags, 0.99)
        convergeDetails.lagMaxSeconds = converge.lags.last
        rows.append(ReportRow(workload: "converge", engine: Self.engine(batch),
                              runs: [RunResult(core: convergeCore, details: convergeDetails)]))
        return Outcome(rows: rows, populateSeconds: populateSeconds, commitSeconds: commitSeconds,
                       verifications: verifications)
    }
}
