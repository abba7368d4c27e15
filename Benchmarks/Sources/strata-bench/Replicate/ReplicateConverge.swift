import Foundation
import StrataRecords
import StrataStorage
import Synchronization

/// The lag between stores of one dataset (decision 111): the writer's store and two stores
/// made from the dataset (`strata replicate NEW --from URL --name N --pull --follow`), each
/// with its replicator following (`--pull --follow`), while the writer commits at `rate`
/// transactions a second for `seconds`. Each paced commit also renames a list to its number;
/// a reader of the second store (another process's file, opened shared and read-only) looks
/// every millisecond, and a commit's lag is from its commit to the first look that shows it
/// or a later one — the whole path: the writer's push, PostgreSQL's notification, the other
/// store's pull and commit.
struct ReplicateConverge {
    /// Each paced commit's lag, sorted.
    var lags: [Double]
    var committed: Int
    var commitSeconds: Double
    /// From the first paced commit until the other store showed the last.
    var windowSeconds: Double
    /// Whether, after the followers stopped and each store exchanged once more, the three
    /// stores and PostgreSQL held the same digest.
    var converged: Bool
    var digests: [String]
    /// Deadlocks PostgreSQL detected in the dataset's database during the run: each cost a push
    /// the server's `deadlock_timeout` (a second by default) and a retry.
    var deadlocks: Int

    static let timeout = 120.0

    static func run(tool: String, store: String, directory: String, cluster: PostgresCluster,
                    database: (name: String, url: String), writer: ReplicateWriter, rate: Int,
                    seconds: Double) throws -> ReplicateConverge {
        let environment = ["PGPASSWORD": cluster.password]
        let deadlocksBefore = try deadlockCount(database.name, in: cluster)
        let others = ["b", "c"].map { (name: $0, path: directory + "/converge-\($0).strata") }
        var followers: [ToolProcess] = []
        defer { for follower in followers { follower.interrupt(); _ = follower.wait(timeout: 30) } }
        followers.append(try ToolProcess(tool, ["replicate", store, "--to", database.url, "--pull", "--follow", "--json"],
                                         environment: environment))
        for other in others {
            followers.append(try ToolProcess(tool, ["replicate", other.path, "--from", database.url, "--name", other.name,
                                                    "--pull", "--follow", "--json"], environment: environment))
        }
        var options = StoreOptions()
        options.readOnly = true
        options.sharing = .shared
        let list = writer.stampedList
        // The joiners have made their stores and copied the dataset (the stamped list is there)
        // before the clock starts; the writer's follower shows itself with the warm-up commit.
        var opened: [RecordStore] = []
        defer { for store in opened { try? store.close() } }
        let deadline = Measure.now() + UInt64(timeout * 1e9)
        for other in others {
            while true {
                if access(other.path, F_OK) == 0,
                   let store = try? RecordStore(path: other.path, model: try ReplicateModel.model(), options: options) {
                    if (try? store.read({ try $0.values(of: list) })) != nil {
                        opened.append(store)
                        break
                    }
                    try? store.close()
                }
                guard Measure.now() < deadline else {
                    throw BenchError("\(other.path) was not made from the dataset in \(Int(timeout)) s "
                                     + "(\(followers.map { $0.lines.suffix(2) }))")
                }
                usleep(50_000)
            }
        }
        let watched = opened[0]
        // The highest stamp seen, and when each stamp was first seen.
        let sightings = Mutex<[(stamp: Int, at: UInt64)]>([])
        let stop = Atomic<Bool>(false)
        let watcher = Thread {
            var seen = -1
            while !stop.load(ordering: .relaxed) {
                if case .string(let name)? = try? watched.read({ try $0.values(of: list)?["name"] }),
                   name.hasPrefix("stamp "), let stamp = Int(name.dropFirst(6)), stamp > seen {
                    seen = stamp
                    let now = Measure.now()
                    sightings.withLock { $0.append((stamp, now)) }
                }
                usleep(1_000)
            }
        }
        watcher.start()
        defer { stop.store(true, ordering: .relaxed) }
        func waitForStamp(_ stamp: Int, timeout: Double) -> Bool {
            let deadline = Measure.now() + UInt64(timeout * 1e9)
            while Measure.now() < deadline {
                if sightings.withLock({ ($0.last?.stamp ?? -1) >= stamp }) { return true }
                usleep(2_000)
            }
            return false
        }
        // A warm-up commit, waited for.
        try writer.commitOne(stamp: "stamp 0")
        guard waitForStamp(0, timeout: timeout) else { throw BenchError("the second store never showed the warm-up commit") }

        let count = max(1, Int((Double(rate) * seconds).rounded()))
        let interval = 1e9 / Double(rate)
        var commits: [UInt64] = []
        let began = Measure.now()
        for i in 1...count {
            let due = began + UInt64(Double(i - 1) * interval)
            let now = Measure.now()
            if due > now { usleep(UInt32((due - now) / 1_000)) }
            try writer.commitOne(stamp: "stamp \(i)")
            commits.append(Measure.now())
        }
        let commitSeconds = Double(Measure.now() - began) / 1e9
        guard waitForStamp(count, timeout: timeout) else {
            throw BenchError("the second store did not show the last paced commit in \(Int(timeout)) s")
        }
        let windowSeconds = Double(Measure.now() - began) / 1e9
        stop.store(true, ordering: .relaxed)
        while !watcher.isFinished { usleep(1_000) }
        // Each commit's lag: to the first sighting of its stamp or a later one.
        let seen = sightings.withLock { $0 }
        var lags: [Double] = []
        var next = 0
        for (index, committed) in commits.enumerated() {
            let stamp = index + 1
            while next < seen.count && seen[next].stamp < stamp { next += 1 }
            guard next < seen.count else { break }
            lags.append(Double(seen[next].at > committed ? seen[next].at - committed : 0) / 1e9)
        }
        for follower in followers { follower.interrupt(); _ = follower.wait(timeout: 30) }
        // Each follower's reports (`--keep` leaves them): where a store that fell behind spent
        // its rounds.
        for (index, follower) in followers.enumerated() {
            try? (follower.lines.joined(separator: "\n") + "\n")
                .write(toFile: directory + "/converge-follower-\(["a", "b", "c"][index]).jsonl", atomically: false, encoding: .utf8)
        }
        followers = []
        // Quiet: each store exchanges once more, twice round, then all must agree.
        for _ in 0..<2 {
            for (name, path) in [("default", store)] + others.map({ ($0.name, $0.path) }) {
                let exchange = try ToolProcess(tool, ["replicate", path, "--to", database.url, "--name", name, "--pull", "--json"],
                                               environment: environment)
                let exit = exchange.wait(timeout: timeout)
                guard exit.exitedCleanly else { throw BenchError("`\(exchange.commandLine)` ended with \(exit.description)") }
            }
        }
        var digests = [try ReplicaDigest(store: writer.store)]
        for store in opened { digests.append(try ReplicaDigest(store: store)) }
        let inPostgres = try ReplicaDigest(database: database.name, in: cluster)
        // The tokens are each store's own: compared without them.
        func content(_ digest: ReplicaDigest) -> String { digest.fields.dropFirst().map(\.value).joined(separator: ",") }
        let converged = digests.allSatisfy { content($0) == content(inPostgres) }
        return ReplicateConverge(lags: lags.sorted(), committed: count, commitSeconds: commitSeconds,
                                 windowSeconds: windowSeconds, converged: converged,
                                 digests: (digests + [inPostgres]).map { content($0) },
                                 deadlocks: try deadlockCount(database.name, in: cluster) - deadlocksBefore)
    }

    private static func deadlockCount(_ database: String, in cluster: PostgresCluster) throws -> Int {
        let text = try cluster.psql("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()",
                                    database: database)
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
}
