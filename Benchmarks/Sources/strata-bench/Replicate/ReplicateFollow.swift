import Foundation

/// The lag under a steady commit rate: `strata replicate --follow --json` runs as a child while
/// the writer commits at `rate` transactions a second for `seconds`; once the follower's
/// output reaches the store's last token it is stopped (SIGINT: its lines are flushed), and
/// its pushes' `lagSeconds` are figures.
///
/// A push's `lagSeconds` is the age of the newest transaction it applied when the push ends;
/// under a steady rate a push goes on applying batches while commits keep coming, so it ends
/// only when it has caught up, and that figure stays near zero whatever the others waited.
/// The phase also takes each transaction's own lag, from its commit to the moment a reader of
/// PostgreSQL sees it (``TokenWatcher``).
struct ReplicateFollow {
    /// The pushes made while the writer committed at the rate and until the follower caught
    /// up (the warm-up push before it is left out).
    var pushes: [PushLine]
    /// Each paced transaction's lag, sorted.
    var transactionLags: [Double]
    /// Transactions committed at the rate, and how long that took (the rate kept, or not).
    var committed: Int
    var commitSeconds: Double
    /// From the first paced commit until the follower's line reached the last token.
    var windowSeconds: Double
    var exit: ToolProcess.Exit
    var cpu: CPUShares

    /// The seconds the follower took to show a line, before the benchmark gives up on it.
    static let timeout = 120.0

    /// The pushes' own `lagSeconds`, sorted.
    var lags: [Double] { pushes.compactMap(\.lagSeconds).sorted() }

    /// Runs the phase: the follower against `database`, the writer committing at `rate` for
    /// `seconds`.
    static func run(tool: String, store: String, cluster: PostgresCluster, database: (name: String, url: String),
                    writer: ReplicateWriter, rate: Int, seconds: Double, postgres: PostgresCPU?) throws -> ReplicateFollow {
        let window = CPUShares.Window(postgres: postgres)
        let process = try ToolProcess(tool, ["replicate", store, "--to", database.url, "--follow", "--json"],
                                      environment: ["PGPASSWORD": cluster.password])
        func reached(_ token: UInt64) -> (String) -> Bool {
            { PushLine($0).map { $0.token >= token } ?? false }
        }
        // The follower's first push catches up whatever came before it, then it waits for
        // commits. A warm-up commit, waited for, leaves its start (process, store, connection)
        // out of the paced phase's lags.
        let start = try writer.store.lastHistoryToken().value
        var warm = start
        while warm == start {
            try writer.commitOne()
            warm = try writer.store.lastHistoryToken().value
        }
        guard process.waitForLine(timeout: timeout, reached(warm)) else {
            process.interrupt()
            throw BenchError("`\(process.commandLine)` did not push the warm-up commit in \(Int(timeout)) s "
                             + "(\(process.wait(timeout: 30).description)); it printed \(process.lines)")
        }
        let warmLines = process.lines.count
        let watcher = try TokenWatcher(cluster: cluster, database: database.name)

        let count = max(1, Int((Double(rate) * seconds).rounded()))
        let interval = 1e9 / Double(rate)
        // Each transaction's token and commit time (a commit that changed nothing records none).
        var commits: [(token: UInt64, date: Date)] = []
        var last = warm
        let began = Measure.now()
        for i in 0..<count {
            // Each commit at its time on the schedule; after a late one (a slow commit, a
            // descheduled thread) those due meanwhile follow at once, so the rate holds on average.
            let due = began + UInt64(Double(i) * interval)
            let now = Measure.now()
            if due > now { usleep(UInt32((due - now) / 1_000)) }
            try writer.commitOne()
            let committed = Date()
            let token = try writer.store.lastHistoryToken().value
            if token != last { commits.append((token, committed)) }
            last = token
        }
        let commitSeconds = Double(Measure.now() - began) / 1e9
        let caughtUp = process.waitForLine(timeout: timeout, reached(last))
        let windowSeconds = Double(Measure.now() - began) / 1e9
        let seen = watcher.waitUntilSeen(last, timeout: 10)
        process.interrupt()
        let exit = process.wait(timeout: 30)
        let watched = try watcher.stop()
        let cpu = window.finish(exit, children: watched.cpuSeconds)
        guard caughtUp, seen else {
            throw BenchError("`\(process.commandLine)` did not reach token \(last) in \(Int(timeout)) s, or psql did not "
                             + "see it (\(exit.description)); its last lines: \(process.lines.suffix(3))")
        }
        // Stopped by the SIGINT, or by itself at the same moment: either is a clean end here.
        guard exit.signal == SIGINT || exit.exitedCleanly else {
            throw BenchError("`\(process.commandLine)` ended with \(exit.description)")
        }
        return ReplicateFollow(pushes: process.lines[warmLines...].compactMap(PushLine.init),
                               transactionLags: TokenWatcher.lags(commits, watched.sightings), committed: count,
                               commitSeconds: commitSeconds, windowSeconds: windowSeconds, exit: exit, cpu: cpu)
    }
}
