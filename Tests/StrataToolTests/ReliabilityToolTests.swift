import Foundation
import Testing

/// The reliability tools, run as users run them: the built `strata-harness` binary's
/// `crash-test` (simulated crashes and real SIGKILLs) and `fuzz` (storage and record stores),
/// and the libFuzzer targets' replay of their seed corpora (the regression inputs have their
/// own suite, ``FuzzRegressionTests``).
///
/// Budgets here are the suite's share (≥ 1,000 crash points, ≥ 20 process kills,
/// ≥ 10,000 storage fuzz cases; record cases come on top); the long runs are
/// `strata-harness crash-test --rounds 10000` and `strata-harness fuzz --iterations 1000000`
/// (docs/reliability.md).
@Suite(.serialized) struct ReliabilityToolTests {
    static let seed: UInt64 = 20_261_122

    @Test func simulatedCrashesLoseNothing() throws {
        let run = try Tool.run("strata-harness", ["crash-test", "--rounds", "1000", "--seed", "\(Self.seed)"])
        let line = try #require(run.lastLine(startingWith: "crash-test: ", containing: " lost, "), "no summary (seed \(Self.seed)):\n\(run.stderr)")
        #expect(line == "crash-test: 1000 rounds, 0 lost, 0 corrupt, 0 unrecoverable", "seed \(Self.seed):\n\(run.stderr)")
        #expect(run.status == 0)
    }

    @Test func killedWriterProcessesLoseNoAcknowledgedCommit() throws {
        let run = try Tool.run("strata-harness", ["crash-test", "--process", "--kills", "20", "--seed", "\(Self.seed)"])
        let line = try #require(run.lastLine(startingWith: "crash-test: ", containing: " lost, "), "no summary (seed \(Self.seed)):\n\(run.stderr)")
        #expect(line == "crash-test: 20 rounds, 0 lost, 0 corrupt, 0 unrecoverable", "seed \(Self.seed):\n\(run.stderr)")
        #expect(run.status == 0)
    }

    /// Three writer processes and a reader sharing one store, killed 40 times at random
    /// moments (the long run: `strata-harness multi-process --kills 1000`).
    @Test func processesSharingAStoreLoseNothingWhenKilled() throws {
        let run = try Tool.run("strata-harness", ["multi-process", "--kills", "40", "--seed", "\(Self.seed)"])
        let line = try #require(run.lastLine(startingWith: "multi-process: 40 kills", containing: " lost, "),
                                "no summary (seed \(Self.seed)):\n\(run.stdout)\n\(run.stderr)")
        #expect(line.hasSuffix("0 lost, 0 duplicated, 0 wrong, check clean"), "seed \(Self.seed): \(line)\n\(run.stderr)")
        #expect(run.status == 0)
    }

    /// `strata replicate --follow` killed 10 times while 1,000 transactions commit, then a last
    /// push: PostgreSQL equals the store (the long run: `--kills 100 --transactions 10000`).
    @Test func aKilledReplicatorResumesExactlyOnce() throws {
        let run = try Tool.run("strata-harness", ["replicate-kill", "--kills", "10", "--transactions", "1000",
                                                  "--seed", "\(Self.seed)"])
        let line = try #require(run.lastLine(startingWith: "replicate-kill: ", containing: " kills, "),
                                "no summary (seed \(Self.seed)):\n\(run.stdout)\n\(run.stderr)")
        #expect(line.contains("PostgreSQL equals the store"), "seed \(Self.seed): \(line)\n\(run.stderr)")
        #expect(run.status == 0)
    }

    /// The same both ways (`--pull`): a server application inserts and updates rows in
    /// PostgreSQL meanwhile; each insert reaches the store once (the long run: `--kills 100
    /// --transactions 10000 --pull`).
    @Test func aKilledReplicatorPullsEachServerChangeOnce() throws {
        let run = try Tool.run("strata-harness", ["replicate-kill", "--kills", "6", "--transactions", "500", "--pull",
                                                  "--seed", "\(Self.seed)"])
        let line = try #require(run.lastLine(startingWith: "replicate-kill: ", containing: " kills, "),
                                "no summary (seed \(Self.seed)):\n\(run.stdout)\n\(run.stderr)")
        #expect(line.contains("PostgreSQL equals the store"), "seed \(Self.seed): \(line)\n\(run.stderr)")
        let server = try #require(run.lastLine(startingWith: "replicate-kill: the server application", containing: " inserts"),
                                  "\(run.stdout)")
        #expect(server.hasSuffix("0 lost, 0 duplicated"), "seed \(Self.seed): \(server)")
        #expect(run.status == 0)
    }

    /// 14,000 cases: of every twelve, nine damage a store file and three a record store
    /// (10,502 and 3,498).
    @Test func damagedFilesReadCorrectlyOrFailWithTypedErrors() throws {
        let run = try Tool.run("strata-harness", ["fuzz", "--iterations", "14000", "--seed", "\(Self.seed)"])
        let line = try #require(run.lastLine(startingWith: "fuzz: 14000 cases", containing: " crashes, "), "no summary (seed \(Self.seed)):\n\(run.stdout)\n\(run.stderr)")
        #expect(line.hasPrefix("fuzz: 14000 cases, 0 crashes, 0 hangs, "), "seed \(Self.seed):\n\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("fuzz: 0 wrong data"), "seed \(Self.seed):\n\(run.stdout)\n\(run.stderr)")
        let storage = try #require(run.lastLine(startingWith: "fuzz: storage: ", containing: " cases"), "\(run.stdout)")
        let records = try #require(run.lastLine(startingWith: "fuzz: records: ", containing: " cases"), "\(run.stdout)")
        #expect(storage.hasPrefix("fuzz: storage: 10502 cases"), "\(storage)")
        #expect(records.hasPrefix("fuzz: records: 3498 cases"), "\(records)")
        #expect(run.status == 0)
    }

    /// The libFuzzer entry points, built without libFuzzer, replay their seed corpora: each
    /// input must end without a trap or a finding.
    @Test func fuzzTargetsReplayTheirSeedCorpora() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-corpus-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let written = try Tool.run("strata-harness", ["fuzz", "--write-corpus", dir + "/storage", "--write-records-corpus", dir + "/records",
                                                      "--seed", "\(Self.seed)"])
        #expect(written.status == 0, "\(written.stderr)")
        for (target, sub, minimum) in [("strata-fuzz", "storage", 5), ("strata-fuzz-records", "records", 6)] {
            let inputs = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/\(sub)").map { "\(dir)/\(sub)/\($0)" }.sorted()
            #expect(inputs.count >= minimum, "\(target): \(inputs.count) seed inputs")
            let run = try Tool.run(target, inputs, environment: ["STRATA_FUZZ_CASE_DIR": dir])
            #expect(run.status == 0, "\(target): \(run.stdout)\n\(run.stderr)")
            #expect(run.stdout.split(separator: "\n").filter { $0.hasSuffix(" bytes)") }.count == inputs.count, "\(target): \(run.stdout)")
        }
    }
}

/// Runs a product built next to this test bundle.
enum Tool {
    struct Run {
        /// The exit code, or the signal number when `signaled`.
        var status: Int32
        var stdout: String
        var stderr: String
        /// Killed by a signal (a Swift trap is SIGILL or SIGTRAP) rather than exiting.
        var signaled = false

        /// What a crashed run printed about the crash: the runtime's message (`Fatal error: …`,
        /// `Swift runtime failure: …`) and the first frame in the project's code, if any.
        var crashSummary: String {
            let lines = stderr.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            var parts: [String] = []
            if let message = lines.first(where: { $0.contains("Fatal error") || $0.hasPrefix("*** Swift runtime failure") }) {
                parts.append(message.replacingOccurrences(of: "*** ", with: "").replacingOccurrences(of: " ***", with: ""))
            }
            // `1   0x… Store.checkpointLocked() + 4979 in strata at /…/Store+Checkpoint.swift:67:84`
            if let frame = lines.first(where: { $0.contains(" at /") && !$0.contains("[system]") && !$0.contains("runtime failure") }),
               let function = frame.range(of: #"0x[0-9a-f]+ "#, options: .regularExpression).map({ frame[$0.upperBound...] }),
               let at = function.range(of: " at /") {
                let name = function[..<at.lowerBound].components(separatedBy: " + ").first ?? ""
                let file = function[at.upperBound...].split(separator: "/").last.map(String.init) ?? ""
                parts.append("in \(name) at \(file)")
            }
            return parts.joined(separator: " ")
        }

        /// `exit code N` or `killed by signal N (SIGILL: a Swift runtime trap)`.
        var ending: String {
            guard signaled else { return "exit code \(status)" }
            let names: [Int32: String] = [4: "SIGILL: a Swift runtime trap", 5: "SIGTRAP: a Swift runtime trap",
                                          6: "SIGABRT: fatalError or a sanitizer", 9: "SIGKILL", 11: "SIGSEGV", 14: "SIGALRM"]
            return "killed by signal \(status)" + (names[status].map { " (\($0))" } ?? "")
        }

        /// The tools print their summary lines (`crash-test: N rounds, 0 lost, …`) on stdout.
        func lastLine(startingWith prefix: String, containing part: String) -> String? {
            stdout.split(separator: "\n").last { $0.hasPrefix(prefix) && $0.contains(part) }.map(String.init)
        }
    }

    /// `.build/<configuration>`: where SwiftPM puts this bundle and the package's executables.
    static var productsDirectory: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().path
    }

    /// The package root, found from this source file (tests run from a clone of the package).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// Runs `product` with `arguments`. With `backtrace`, a trap prints the crashed thread's
    /// first frames (about 0.3 s), for reports that say where it trapped.
    /// `environment` adds to (or replaces in) this process's environment.
    static func run(_ product: String, _ arguments: [String], backtrace: Bool = false, environment extra: [String: String] = [:]) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: productsDirectory + "/" + product)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        environment["SWIFT_BACKTRACE"] = backtrace
            ? "enable=yes,interactive=no,color=no,threads=crashed,registers=none,images=none,limit=64,top=16" : "enable=no"
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes while the child runs, or a full pipe would block it.
        let group = DispatchGroup()
        nonisolated(unsafe) var errData = Data()
        DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                   stderr: String(decoding: errData, as: UTF8.self), signaled: process.terminationReason == .uncaughtSignal)
    }
}
