import Foundation
import Testing

/// Every input in `Tests/FuzzRegressions` — hostile files the hardening issue names and inputs
/// the fuzzers once failed on — and a fresh copy of the generated ones
/// (`strata-harness fuzz --write-regressions`, so they follow the current writer), each
/// replayed in its own process so that one trap does not hide the others:
/// - a store file (`.strata`) through `strata-fuzz` (no trap, only typed errors, no data that
///   breaks the store's invariants while `check()` calls it clean), and, when `MANIFEST` says
///   `rejected`, `strata check` must refuse it (exit 1, not a signal);
/// - a record store's trees (`.records`) through `strata-fuzz-records` (no trap, only typed
///   errors, no inconsistent answers from a store `checkRecords()` calls sound).
/// Each failing file is reported by name with what it is and how it failed.
@Suite(.serialized) struct FuzzRegressionTests {
    struct Input {
        var path: String
        var expectation: String?
        var what: String?
        var name: String { URL(fileURLWithPath: path).lastPathComponent }
    }

    /// The inputs in `dir`, with their MANIFEST lines (tab-separated: file, expectation, what).
    static func inputs(in dir: String) throws -> [Input] {
        var manifest: [String: (String, String)] = [:]
        if let text = try? String(contentsOfFile: dir + "/MANIFEST", encoding: .utf8) {
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                let parts = line.split(separator: "\t", maxSplits: 2).map(String.init)
                if parts.count == 3 { manifest[parts[0]] = (parts[1], parts[2]) }
            }
        }
        return try FileManager.default.contentsOfDirectory(atPath: dir)
            .filter { $0.hasSuffix(".strata") || $0.hasSuffix(".records") }
            .sorted()
            .map { Input(path: dir + "/" + $0, expectation: manifest[$0]?.0, what: manifest[$0]?.1) }
    }

    /// How `input` fails, or `nil` when it passes. The replay's case files go under `scratch`
    /// (a trap leaves them behind).
    static func failure(of input: Input, scratch: String) throws -> String? {
        let target = input.path.hasSuffix(".records") ? "strata-fuzz-records" : "strata-fuzz"
        let replay = try Tool.run(target, [input.path], backtrace: true, environment: ["STRATA_FUZZ_CASE_DIR": scratch])
        var problems: [String] = []
        if replay.signaled || replay.status != 0 || !replay.stdout.contains(": ok (") {
            problems.append("\(target) \(replay.ending): \(replay.crashSummary)")
        }
        if input.expectation == "rejected" || input.expectation == "readable" {
            let check = try Tool.run("strata", ["check", input.path], backtrace: true)
            if check.signaled {
                problems.append("strata check \(check.ending): \(check.crashSummary)")
            } else if input.expectation == "rejected" && check.status != 1 {
                problems.append("strata check \(check.ending), expected exit code 1 (a typed error or a reported problem): \(check.stdout.split(separator: "\n").prefix(2).joined(separator: " / "))")
            }
        }
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }

    static func replay(_ inputs: [Input], label: String) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("strata-replay-\(getpid())").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        var failures: [String] = []
        for input in inputs {
            if let f = try failure(of: input, scratch: scratch) {
                failures.append(input.name)
                Issue.record("\(label) \(input.name)\(input.what.map { " (\($0))" } ?? ""): \(f)")
            }
        }
        print("FuzzRegressionTests \(label): \(inputs.count - failures.count) of \(inputs.count) inputs pass"
              + (failures.isEmpty ? "" : "; failing: \(failures.joined(separator: ", "))"))
    }

    /// The committed corpus.
    @Test func committedRegressionInputs() throws {
        let inputs = try Self.inputs(in: Tool.packageRoot + "/Tests/FuzzRegressions")
        #expect(inputs.count >= 17, "\(inputs.count) regression inputs")
        try Self.replay(inputs, label: "Tests/FuzzRegressions")
    }

    /// The generated hostile inputs, made afresh by this build's writer.
    @Test func freshlyGeneratedHostileInputs() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-hostile-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let written = try Tool.run("strata-harness", ["fuzz", "--write-regressions", dir])
        try #require(written.status == 0, "\(written.stdout)\(written.stderr)")
        let inputs = try Self.inputs(in: dir)
        #expect(inputs.count >= 17 && inputs.allSatisfy { $0.expectation != nil }, "\(inputs.map(\.name))")
        try Self.replay(inputs, label: "generated")
    }
}
