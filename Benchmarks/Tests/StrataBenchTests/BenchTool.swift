import Foundation

/// `strata-bench` run as `make bench` runs it: the built executable in a process of its own
/// (it re-executes itself for every engine's run, so it cannot run inside the test process).
enum BenchTool {
    /// What a run printed, and how it ended.
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The executable beside this test bundle: SwiftPM puts a package's products and its test
    /// bundle in one directory (`.build/<configuration>`).
    static var executable: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("strata-bench").path
    }

    /// Runs `strata-bench arguments` to its end. Its output goes to files rather than pipes: a
    /// full pipe would block the benchmark and its children, and files need no reader beside it.
    static func run(_ arguments: [String]) throws -> Run {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-bench-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("stdout"), err = dir.appendingPathComponent("stderr")
        try Data().write(to: out)
        try Data().write(to: err)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        // A crash reports itself in the status; a backtrace would only slow the run down.
        process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: try String(contentsOf: out, encoding: .utf8),
                   stderr: try String(contentsOf: err, encoding: .utf8))
    }
}
