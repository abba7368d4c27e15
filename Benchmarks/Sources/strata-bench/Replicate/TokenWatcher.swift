import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// When each token became visible to a reader of PostgreSQL: one `psql` session, kept open,
/// asks for the replication's token every ``interval`` and notes when it moved. `follow` takes
/// each transaction's lag from it, from its commit in Strata to the moment a reader of
/// PostgreSQL sees it, whichever PostgreSQL transaction of a push brought it: a push's own
/// `lagSeconds` is the age of the newest transaction when the whole push ends, which under a
/// steady rate says little about the others (a push goes on while commits keep coming).
final class TokenWatcher: Sendable {
    /// The pause between two questions: the lags' resolution, with one query's round trip.
    static let interval = 0.002

    /// A token and when the session first saw it (or a later one).
    struct Sighting: Sendable {
        var token: UInt64
        var date: Date
    }

    private let child: ChildSpawn
    private let sightings = Mutex<[Sighting]>([])
    private let stopping = Atomic<Bool>(false)
    private let failure = Mutex<String?>(nil)
    /// The session's CPU time once it has ended.
    private let cpuSeconds = Mutex<Double>(0)
    private let done = DispatchSemaphore(value: 0)

    /// Opens the session on `database` and starts asking.
    init(cluster: PostgresCluster, database: String) throws {
        // A psql that dies before a write would otherwise kill this process with SIGPIPE: the
        // write fails instead, and the failure is reported.
        signal(SIGPIPE, SIG_IGN)
        child = try ChildSpawn("/usr/bin/psql", ["-h", "127.0.0.1", "-p", String(cluster.port), "-U", cluster.user,
                                                 "-d", database, "-At", "-q", "-v", "ON_ERROR_STOP=1"],
                               environment: ["PGPASSWORD": cluster.password], withInput: true)
        Thread.detachNewThread { [self] in ask() }
    }

    /// The loop: a query, its one-line answer, a pause; until ``stop()``.
    private func ask() {
        let query = Array("SELECT token FROM strata_replication WHERE name = 'default';\n".utf8)
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        var last: UInt64 = 0
        asking: while !stopping.load(ordering: .relaxed) {
            let written = query.withUnsafeBytes { write(child.input!, $0.baseAddress, $0.count) }
            guard written == query.count else {
                failure.withLock { $0 = "psql: write failed (errno \(errno))" }
                break
            }
            var line: [UInt8]
            while true {
                if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    line = Array(pending[..<newline])
                    pending.removeSubrange(...newline)
                    break
                }
                let n = buffer.withUnsafeMutableBytes { read(child.output, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    failure.withLock { $0 = "psql ended" }
                    break asking
                }
                pending += buffer[..<n]
            }
            if let token = UInt64(String(decoding: line, as: UTF8.self)), token > last {
                last = token
                let seen = Date()
                sightings.withLock { $0.append(Sighting(token: token, date: seen)) }
            }
            usleep(UInt32(Self.interval * 1e6))
        }
        // End of input: psql ends.
        close(child.input!)
        while read(child.output, &buffer, buffer.count) > 0 {}
        close(child.output)
        var status: Int32 = 0
        var usage = rusage()
        while wait4(child.pid, &status, 0, &usage) < 0 && errno == EINTR {}
        cpuSeconds.withLock {
            $0 = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
                + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        }
        done.signal()
    }

    /// Waits until the session has seen `token` (true) or `timeout` seconds passed (false).
    func waitUntilSeen(_ token: UInt64, timeout: Double) -> Bool {
        let deadline = Measure.now() + UInt64(timeout * 1e9)
        while Measure.now() < deadline {
            if sightings.withLock({ $0.last?.token ?? 0 }) >= token { return true }
            if failure.withLock({ $0 }) != nil { return false }
            usleep(1_000)
        }
        return false
    }

    /// Ends the session; returns what it saw, in order, and the CPU time psql used. Throws what
    /// went wrong with it, if anything did.
    func stop() throws -> (sightings: [Sighting], cpuSeconds: Double) {
        stopping.store(true, ordering: .relaxed)
        done.wait()
        if let failure = failure.withLock({ $0 }) { throw BenchError(failure) }
        return (sightings.withLock { $0 }, cpuSeconds.withLock { $0 })
    }

    /// Each of `commits`' lag (token and commit time): until the first sighting of its token or
    /// a later one. A commit never seen is left out.
    static func lags(_ commits: [(token: UInt64, date: Date)], _ sightings: [Sighting]) -> [Double] {
        var lags: [Double] = []
        var next = 0
        for commit in commits.sorted(by: { $0.token < $1.token }) {
            while next < sightings.count && sightings[next].token < commit.token { next += 1 }
            guard next < sightings.count else { break }
            lags.append(sightings[next].date.timeIntervalSince(commit.date))
        }
        return lags.sorted()
    }
}
