import ArgumentParser
import StrataRecords
import StrataStorage
import StrataTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `strata-harness multi-process`: several writer and reader processes on one store shared
/// between processes (``ProcessSharing/shared(lockTimeout:)``), killed with SIGKILL at random
/// moments and restarted, then the store verified: every acknowledged step present, no step
/// applied twice, every derived value right, the page file clean.
///
/// Each writer's progress tag says exactly which steps committed (acknowledged or not: a
/// writer killed after a commit and before printing it), so the items that must exist are
/// known: `lost` counts acknowledged steps missing or progress behind an acknowledgement,
/// `duplicated` items present twice or that should not exist, `wrong` derived values or index
/// entries that disagree with the rows (`checkRecords`) and readers that saw an inconsistent
/// snapshot.
struct MultiProcessTestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "multi-process",
        abstract: "Kill writer and reader processes sharing one store; verify what they acknowledged.")

    @Option(help: "Writer processes.")
    var writers = 3
    @Option(help: "Reader processes.")
    var readers = 1
    @Option(help: "Kills to perform.")
    var kills = 100
    @Option(help: "Seed of the kill schedule.")
    var seed: UInt64 = 1
    @Option(help: "Directory for the store (a fresh temporary one by default; kept on failure).")
    var directory: String?

    func validate() throws {
        if writers < 1 { throw ValidationError("--writers must be at least 1") }
        if readers < 0 { throw ValidationError("--readers must be 0 or more") }
        if kills < 0 { throw ValidationError("--kills must be 0 or more") }
    }

    func run() throws {
        let dir = try directory ?? makeTemporaryDirectory("strata-multi")
        let path = dir + "/shared.strata"
        try MultiProcessWorkload.prepare(path: path, writers: writers)
        var rng = SplitMix64(seed: seed)
        var acked = Array(repeating: 0, count: writers)
        var reads = 0
        var bad: [String] = []
        let roles = (0..<writers).map { ["--writer", String($0)] } + (0..<readers).map { ["--reader", String($0)] }
        func start(_ role: Int) throws -> ChildProcess {
            try ChildProcess(arguments: ["multi-process-worker", "--path", path, "--writers", String(writers)]
                + roles[role])
        }
        var children = try roles.indices.map { try start($0) }
        func drain(_ role: Int, wait: Int32 = 0) {
            while let line = children[role].readLine(timeoutMilliseconds: wait) {
                if line.hasPrefix("ack "), let step = Int(line.dropFirst(4)), role < writers {
                    acked[role] = max(acked[role], step)
                } else if line.hasPrefix("read ") {
                    reads += 1
                } else if line.hasPrefix("BAD ") {
                    bad.append("reader: \(line.dropFirst(4))")
                }
                if children[role].atEOF { break }
            }
        }
        let started = monotonicSeconds()
        var exits: [String] = []
        for kill in 0..<kills {
            // 20 to 120 ms between kills; every process gets time to commit and to be killed
            // anywhere: inside a transaction, a checkpoint, a compaction, a catch-up.
            let pause = 20 + rng.below(100)
            let deadline = monotonicSeconds() + Double(pause) / 1000
            while monotonicSeconds() < deadline {
                for role in roles.indices { drain(role) }
                usleep(2000)
            }
            let victim = rng.below(roles.count)
            children[victim].kill()
            drain(victim, wait: 50)
            let status = children[victim].wait()
            if status.signal != SIGKILL { exits.append("role \(roles[victim]) ended by itself before kill \(kill): \(status)") }
            children[victim] = try start(victim)
        }
        // Let every process run a little more, then stop them all (a kill too).
        usleep(200_000)
        for role in roles.indices {
            children[role].kill()
            drain(role, wait: 50)
            let status = children[role].wait()
            if status.signal != SIGKILL { exits.append("role \(roles[role]) ended by itself: \(status)") }
        }
        let seconds = monotonicSeconds() - started
        let verdict = try verify(path: path, acked: acked)
        let transactions = verdict.committed
        print("multi-process: \(kills) kills, \(writers) writers, \(readers) readers, \(transactions) transactions "
              + "in \(String(format: "%.1f", seconds)) s, \(reads) consistent snapshots read; "
              + "\(verdict.lost) lost, \(verdict.duplicated) duplicated, \(verdict.wrong + bad.count) wrong, "
              + "check \(verdict.checkClean ? "clean" : "NOT clean")")
        for line in (bad + verdict.problems + exits).prefix(20) { printError("multi-process: \(line)") }
        if verdict.lost + verdict.duplicated + verdict.wrong + bad.count > 0 || !verdict.checkClean || !exits.isEmpty {
            printError("multi-process: the store is kept in \(dir) (seed \(seed))")
            throw ExitCode(1)
        }
        if directory == nil { removeDirectory(dir) }
    }

    struct Verdict {
        var committed = 0
        var lost = 0
        var duplicated = 0
        var wrong = 0
        var checkClean = true
        var problems: [String] = []
    }

    /// Opens the store (recovering it) and compares it with what the writers recorded.
    private func verify(path: String, acked: [Int]) throws -> Verdict {
        var verdict = Verdict()
        let store = try RecordStore(path: path, model: try todoModel(), options: MultiProcessWorkload.options())
        defer { try? store.close() }
        try store.read { reader in
            var titles: [String: Int] = [:]
            for item in try reader.objects("Item") {
                if let title = try reader.value("title", of: item).stringValue { titles[title, default: 0] += 1 }
            }
            var expectedTitles = 0
            for writer in 0..<writers {
                let last = try MultiProcessWorkload.progress(of: writer, in: reader).1
                verdict.committed += last
                if last < acked[writer] {
                    verdict.lost += acked[writer] - last
                    verdict.problems.append("writer \(writer): progress \(last), acknowledged \(acked[writer])")
                }
                for step in MultiProcessWorkload.expectedSteps(through: last) {
                    expectedTitles += 1
                    switch titles[MultiProcessWorkload.title(writer: writer, step: step)] ?? 0 {
                    case 1: break
                    case 0:
                        verdict.lost += 1
                        verdict.problems.append("writer \(writer): step \(step) missing")
                    default:
                        verdict.duplicated += 1
                        verdict.problems.append("writer \(writer): step \(step) present twice")
                    }
                }
            }
            let present = titles.values.reduce(0, +)
            if present > expectedTitles {
                let extra = present - expectedTitles - verdict.duplicated
                if extra > 0 {
                    verdict.duplicated += extra
                    verdict.problems.append("\(extra) items no committed step made (or deleted ones back)")
                }
            }
            let problems = try reader.checkRecords(limit: 20)
            verdict.wrong += problems.count
            verdict.problems += problems
        }
        let report = try store.storage.check()
        verdict.checkClean = report.isClean
        verdict.problems += report.problems.prefix(5)
        return verdict
    }
}
