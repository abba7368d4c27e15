import Foundation

/// What `replicate` prints after the table: every phase's figures (transactions, changes and rows
/// per second, each process's CPU), the target (≥ 50,000 rows/s pushed, on the grouped push of the
/// small transactions) met or missed, what grouping buys, the lag under the steady rate, what
/// limits the push, and the digest comparisons.
struct ReplicateSummary {
    static let targetRowsPerSecond = 50_000.0

    let outcome: ReplicateRunner.Outcome
    let scale: ReplicateScale
    let batch: Int

    private func run(_ workload: String, _ batch: Int) -> RunResult<ReplicateRunDetails>? {
        outcome.rows.first { $0.workload == workload && $0.engine == ReplicateRunner.engine(batch) }?.runs.first
    }

    /// The phases' figures in columns: rates per second of the push's own time; CPU as shares
    /// of the tool's wall time (100% = one core throughout).
    var tableLines: [String] {
        let header = ["phase", "engine", "Strata tx", "changes", "rows", "PG tx", "seconds", "tx/s", "changes/s", "rows/s",
                      "rows/s ÷ 50K", "strata CPU", "PostgreSQL CPU", "others' CPU", "tool's wall"]
        let cells = outcome.rows.compactMap { row -> [String]? in
            guard let run = row.runs.first else { return nil }
            let (c, d) = (run.core, run.details)
            let perSecond = { (n: Int) in RateFormat.compact(Double(n) / c.seconds) }
            return [row.workload, row.engine, RateFormat.count(d.transactions), RateFormat.count(d.changes),
                    RateFormat.count(c.ops), RateFormat.count(d.batches), String(format: "%.2f", c.seconds),
                    perSecond(d.transactions), perSecond(d.changes), perSecond(c.ops),
                    String(format: "%.2f×", c.opsPerSecond / Self.targetRowsPerSecond), d.cpu.share(d.cpu.toolSeconds),
                    d.cpu.share(d.cpu.postgresSeconds), d.cpu.share(d.cpu.otherSeconds.map { $0 + d.cpu.benchSeconds }),
                    String(format: "%.2f s", d.cpu.wallSeconds)]
        }
        return ReportTable.aligned(header, cells, textColumns: 2)
    }

    func add(to report: inout Report<ReplicateRunDetails>) {
        report.summary.append("per phase, from the tool's own push time (rows/s ÷ 50K: the target's ratio, which counts "
                              + "for the push at \(ReplicateRunner.engine(batch)) only):")
        report.summary += tableLines.map { "  " + $0 }
        var rowsPerSecond: [String: Double?] = [:], changesPerSecond: [String: Double?] = [:]
        var transactionsPerSecond: [String: Double?] = [:]
        for row in outcome.rows {
            guard let run = row.runs.first else { continue }
            let key = "\(row.workload)_\(row.engine)"
            rowsPerSecond[key] = run.core.opsPerSecond
            changesPerSecond[key] = Double(run.details.changes) / run.core.seconds
            transactionsPerSecond[key] = Double(run.details.transactions) / run.core.seconds
        }
        report.summaryFigures["rows_per_s"] = rowsPerSecond
        report.summaryFigures["changes_per_s"] = changesPerSecond
        report.summaryFigures["transactions_per_s"] = transactionsPerSecond
        addTarget(to: &report)
        addLag(to: &report)
        report.summary.append(String(format: "untimed: filling the store %.2f s; committing the %@ transactions %.2f s "
                                     + "(%@ tx/s, history on)", outcome.populateSeconds,
                                     RateFormat.count(scale.transactions), outcome.commitSeconds,
                                     RateFormat.compact(Double(scale.transactions) / outcome.commitSeconds)))
        report.summary += outcome.verifications
        report.summary.append(outcome.allEqual ? "PostgreSQL equalled the store after every push"
                              : "PostgreSQL DIFFERED from the store (see above): the figures do not count")
    }

    /// The target on the grouped push, what limits it, and what grouping buys over `batch-1`.
    private func addTarget(to report: inout Report<ReplicateRunDetails>) {
        guard let push = run("push", batch) else { return }
        let grouped = ReplicateRunner.engine(batch)
        let ratio = push.core.opsPerSecond / Self.targetRowsPerSecond
        let met = ratio >= 1
        report.summary.append(String(format: "target (≥ 50,000 rows/s pushed; %@ transactions of 1–4 item changes, one "
                                     + "push with --batch %d): %@ rows/s ÷ 50,000 = %.2f× (%@)",
                                     RateFormat.count(push.details.transactions), batch,
                                     RateFormat.compact(push.core.opsPerSecond), ratio, met ? "met" : "MISSED"))
        report.summaryFigures["target"] = ["rows_per_s": push.core.opsPerSecond, "ratio": ratio, "met": met ? 1 : 0]
        report.summary.append("what limits the push at \(grouped): \(push.details.cpu.verdict) (\(push.details.cpu.text))")
        guard let single = run("push", 1) else { return }
        let transactionsPerSecond = { (r: RunResult<ReplicateRunDetails>) in Double(r.details.transactions) / r.core.seconds }
        report.summary.append(String(
            format: "grouping: %@ ÷ batch-1 = %.1f× in rows/s, %.1f× in transactions/s (PostgreSQL transactions %@ vs "
                + "%@; rows written %@ vs %@: a batch writes once a row several of its transactions changed); what "
                + "limits batch-1: %@", grouped, push.core.opsPerSecond / single.core.opsPerSecond,
            transactionsPerSecond(push) / transactionsPerSecond(single), RateFormat.count(push.details.batches),
            RateFormat.count(single.details.batches), RateFormat.count(push.core.ops), RateFormat.count(single.core.ops),
            single.details.cpu.verdict))
    }

    /// The lag under the steady rate: each transaction's, and the pushes' own.
    private func addLag(to report: inout Report<ReplicateRunDetails>) {
        guard let follow = run("follow", batch), let committed = follow.details.committed,
              let commitSeconds = follow.details.commitSeconds else { return }
        let d = follow.details
        let ms = { (s: Double?) in s.map { String(format: "%.1f ms", $0 * 1e3) } ?? "-" }
        report.summary.append(String(
            format: "lag at %d commits/s (%@ committed in %.2f s; %@ transactions in %d pushes, %.1f a push, a push "
                + "taking %@ (median), %@ at most): each transaction, from its commit until a reader of PostgreSQL "
                + "sees it (psql asking every 2 ms): median %@, p99 %@, max %@; the pushes' own lagSeconds (the "
                + "newest transaction's age as each push ends): median %@, max %@", scale.rate,
            RateFormat.count(committed), commitSeconds, RateFormat.count(d.transactions), d.pushes,
            Double(d.transactions) / Double(max(d.pushes, 1)), ms(d.pushMedianSeconds), ms(d.pushMaxSeconds),
            ms(d.lagMedianSeconds), ms(d.lagP99Seconds), ms(d.lagMaxSeconds), ms(d.pushLagMedianSeconds),
            ms(d.pushLagMaxSeconds)))
        report.summary.append("while following: \(d.cpu.text)")
        report.summaryFigures["lag_s"] = ["median": d.lagMedianSeconds, "p99": d.lagP99Seconds, "max": d.lagMaxSeconds,
                                          "push_lag_median": d.pushLagMedianSeconds, "push_lag_max": d.pushLagMaxSeconds,
                                          "push_median": d.pushMedianSeconds, "push_max": d.pushMaxSeconds,
                                          "rate": Double(scale.rate), "pushes": Double(d.pushes)]
    }
}
