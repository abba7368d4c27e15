import Foundation
import Testing

/// The reliability tools, run as users run them: the built `strata` binary's `crash-test`
/// (simulated crashes and real SIGKILLs) and `fuzz`, and the libFuzzer target's replay of its
/// seed corpus and of every input it ever crashed on (`Tests/FuzzRegressions`).
///
/// Budgets here are the suite's share (issue 3: ≥ 1,000 crash points, ≥ 20 process kills,
/// ≥ 10,000 fuzz cases); the long runs are `strata crash-test --rounds 10000` and
/// `strata fuzz --iterations 1000000` (README, "Reliability").
@Suite(.serialized) struct ReliabilityToolTests {
    static let seed: UInt64 = 20_261_122

    @Test func simulatedCrashesLoseNothing() throws {
        let run = try Tool.run("strata", ["crash-test", "--rounds", "1000", "--seed", "\(Self.seed)"])
        let line = try #require(run.lastLine(startingWith: "crash-test: ", containing: " lost, "), "no summary (seed \(Self.seed)):\n\(run.stderr)")
        #expect(line == "crash-test: 1000 rounds, 0 lost, 0 corrupt, 0 unrecoverable", "seed \(Self.seed):\n\(run.stderr)")
        #expect(run.status == 0)
    }

    @Test func killedWriterProcessesLoseNoAcknowledgedCommit() throws {
        let run = try Tool.run("strata", ["crash-test", "--process", "--kills", "20", "--seed", "\(Self.seed)"])
        let line = try #require(run.lastLine(startingWith: "crash-test: ", containing: " lost, "), "no summary (seed \(Self.seed)):\n\(run.stderr)")
        #expect(line == "crash-test: 20 rounds, 0 lost, 0 corrupt, 0 unrecoverable", "seed \(Self.seed):\n\(run.stderr)")
        #expect(run.status == 0)
    }

    @Test func damagedFilesReadCorrectlyOrFailWithTypedErrors() throws {
        let run = try Tool.run("strata", ["fuzz", "--iterations", "10000", "--seed", "\(Self.seed)"])
        let line = try #require(run.lastLine(startingWith: "fuzz: 10000 cases", containing: " crashes, "), "no summary (seed \(Self.seed)):\n\(run.stdout)\n\(run.stderr)")
        #expect(line.hasPrefix("fuzz: 10000 cases, 0 crashes, 0 hangs, "), "seed \(Self.seed):\n\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("fuzz: 0 wrong data"), "seed \(Self.seed):\n\(run.stdout)\n\(run.stderr)")
        #expect(run.status == 0)
    }

    /// The libFuzzer entry point, built without libFuzzer, replays the seed corpus and every
    /// regression input: each must end without a trap.
    @Test func fuzzTargetReplaysCorpusAndRegressions() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-corpus-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let written = try Tool.run("strata", ["fuzz", "--write-corpus", dir, "--seed", "\(Self.seed)"])
        #expect(written.status == 0, "\(written.stderr)")
        var inputs = try FileManager.default.contentsOfDirectory(atPath: dir).map { "\(dir)/\($0)" }
        #expect(inputs.count >= 5)
        let regressions = Tool.packageRoot + "/Tests/FuzzRegressions"
        inputs += (try? FileManager.default.contentsOfDirectory(atPath: regressions))?
            .filter { !$0.hasPrefix(".") && $0 != "README.md" }.map { "\(regressions)/\($0)" } ?? []
        let run = try Tool.run("strata-fuzz", inputs.sorted())
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.split(separator: "\n").filter { $0.hasSuffix(" bytes)") }.count == inputs.count)
    }
}

/// Runs a product built next to this test bundle.
enum Tool {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String

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

    static func run(_ product: String, _ arguments: [String]) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: productsDirectory + "/" + product)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
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
                   stderr: String(decoding: errData, as: UTF8.self))
    }
}
