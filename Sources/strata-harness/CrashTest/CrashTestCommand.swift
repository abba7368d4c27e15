import ArgumentParser
import Foundation
import StrataStorage
import StrataTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `strata-harness crash-test`: crashes a seeded workload at random points and checks that every
/// recovery is exactly a committed prefix that keeps every acknowledged commit.
///
/// Simulated mode (default): each round runs a ~50-transaction workload on a
/// `SimulatedFileSystem` (puts, deletes, 10–100 KB values, trees created and dropped, a
/// rolled-back transaction, a compaction half-way, checkpoints from a small log threshold;
/// `full` and `normal` durability alternate by round) and picks one crash point uniformly over
/// the run's mutating calls: even round pairs fork the file system at that call (reservoir
/// sampling over `onMutation`, the run goes on), odd pairs stop the I/O there with
/// `crashAfter(operations:)` on the same workload (so the engine's error paths run too). The
/// fork or the stopped file system then crashes with `crash(seed:)` (every unsynced write kept,
/// dropped or torn) and is reopened and checked.
///
/// One round in five runs record-layer transactions instead (``RecordsCrashTest``): after
/// recovery every derived value and index must agree with the rows. One in twenty crashes a
/// migration through a plan (``MigrationCrashTest``): the old store or the migrated one, whole.
///
/// `--process` mode: a real writer process (`crash-test-writer`) with `full` durability on a
/// real file prints each acknowledged commit; it is killed with SIGKILL at a random moment,
/// the file is reopened and checked, and the next writer continues on the same file.
struct CrashTestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-test",
        abstract: "Crash a seeded workload at random points and verify every recovery.",
        discussion: """
            Each round checks that the recovered store holds exactly the state after some \
            committed transaction, that it includes every acknowledged (full-durability, or \
            synced) commit, that check() is clean, and that it takes a new write that survives \
            close and reopen. Ends with `crash-test: N rounds, L lost, C corrupt, U \
            unrecoverable` and exits 1 if any count is not zero.
            """)

    @Option(help: "Rounds to run (simulated mode).")
    var rounds = 1000

    @Option(help: "Seed of the workloads and crash choices.")
    var seed: UInt64 = 1

    @Flag(help: "Kill a real writer process with SIGKILL instead of simulating crashes.")
    var process = false

    @Option(help: "Kills to perform in --process mode.")
    var kills = 20

    @Option(help: .hidden)
    var only: Int?

    @Flag(help: .hidden)
    var verbose = false

    func validate() throws {
        if rounds < 1 { throw ValidationError("--rounds must be at least 1") }
        if kills < 1 { throw ValidationError("--kills must be at least 1") }
        if let only, only < 0 { throw ValidationError("--only must be 0 or more") }
    }

    func run() throws {
        var counts: CrashCounts
        if process {
            counts = try ProcessCrashTest(seed: seed, kills: kills, verbose: verbose).run()
        } else if let only {
            counts = SimulatedCrashTest(seed: seed, rounds: rounds, only: only, verbose: verbose).run()
        } else {
            // One round in five runs record-layer transactions (derived attributes, indexes,
            // relationships) through the same crash model.
            // One in twenty migrates such a store through a migration plan.
            let recordRounds = rounds / 5, migrationRounds = rounds / 20
            counts = SimulatedCrashTest(seed: seed, rounds: rounds - recordRounds - migrationRounds, only: nil,
                                        verbose: verbose).run()
            var start = monotonicSeconds()
            try RecordsCrashTest(seed: seed, rounds: recordRounds, verbose: verbose).run(into: &counts)
            if recordRounds > 0 {
                let seconds = String(format: "%.1f", monotonicSeconds() - start)
                printError("crash-test: \(recordRounds) record-layer rounds in \(seconds)s")
            }
            start = monotonicSeconds()
            try MigrationCrashTest(seed: seed, rounds: migrationRounds, verbose: verbose).run(into: &counts)
            if migrationRounds > 0 {
                let seconds = String(format: "%.1f", monotonicSeconds() - start)
                printError("crash-test: \(migrationRounds) migration rounds in \(seconds)s")
            }
        }
        print("crash-test: \(counts.rounds) rounds, \(counts.lost) lost, \(counts.corrupt) corrupt, "
              + "\(counts.unrecoverable) unrecoverable")
        if counts.lost + counts.corrupt + counts.unrecoverable > 0 { throw ExitCode(1) }
    }
}

/// The tally of a crash test.
struct CrashCounts {
    var rounds = 0
    var lost = 0
    var corrupt = 0
    var unrecoverable = 0
    var reported = 0

    /// Records one round's verdict; prints the first few failures on stderr.
    mutating func record(_ verdict: CrashVerdict, _ label: @autoclosure () -> String) {
        rounds += 1
        let kind: String
        switch verdict {
        case .ok: return
        case .lost(let why): lost += 1; kind = "LOST: \(why)"
        case .corrupt(let why): corrupt += 1; kind = "CORRUPT: \(why)"
        case .unrecoverable(let why): unrecoverable += 1; kind = "UNRECOVERABLE: \(why)"
        }
        reported += 1
        if reported <= 25 { printError("crash-test: \(label()): \(kind)") }
        if reported == 25 { printError("crash-test: (further failures not shown)") }
    }
}

enum CrashVerdict {
    case ok(state: Int)
    case lost(String)
    case corrupt(String)
    case unrecoverable(String)

    /// An error met while recovering, reading or writing the recovered store.
    static func from(_ error: any Error, _ during: String) -> CrashVerdict {
        if isCorruptError(error) || ToolError.isWrongResult(error) || error is CrashWorkloadFailure {
            return .corrupt("\(during): \(error)")
        }
        return .unrecoverable("\(during): \(error)")
    }
}
