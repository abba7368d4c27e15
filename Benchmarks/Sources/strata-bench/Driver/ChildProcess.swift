import ArgumentParser
import Foundation

/// The benchmarks' child processes: the same executable, re-executed through a hidden
/// subcommand (`kv-run`, `records-run`, `objects-run`) that runs one workload on one engine and
/// prints its result as one JSON line on stdout, so every run's memory and peak RSS are its own
/// and one engine's caches cannot help or hurt another's.
enum ChildProcess {
    /// Runs `path args`, and decodes the last line of its stdout that parses as `R`; a child
    /// that fails prints a ``ChildFailure`` line instead, which becomes the error.
    ///
    /// The child's stderr (its progress lines) is passed on to ours as it comes; when neither
    /// has said anything for ``Heartbeat/silence`` seconds, a line says that `label` is still
    /// running, so a long untimed phase (a setup, a store check) is not taken for a hang.
    static func launch<R: Decodable>(_ path: String, _ args: [String], as: R.Type, label: String? = nil) throws -> R {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = args
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let heartbeat = Heartbeat(label: label ?? args.prefix(5).joined(separator: " "))
        try process.run()
        let forwarded = heartbeat.forward(err.fileHandleForReading)
        heartbeat.start()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        heartbeat.stop()
        // Every line the child wrote is on our stderr before its result is reported.
        forwarded.wait()
        let lines = output.split(separator: UInt8(ascii: "\n")).reversed()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let failure = lines.lazy.compactMap { try? JSONDecoder().decode(ChildFailure.self, from: Data($0)) }.first
            if let failure { throw BenchError(failure.error) }
            throw BenchError("child `\(args.joined(separator: " "))` failed (status \(process.terminationStatus))")
        }
        // The result is the last line that parses; anything an engine prints before it is ignored.
        for line in lines {
            if let result = try? JSONDecoder().decode(R.self, from: Data(line)) { return result }
        }
        throw BenchError("child `\(args.joined(separator: " "))` printed no result")
    }

    /// The child's side: prints what `run` returns as one JSON line, or, if it throws, a
    /// ``ChildFailure`` line saying why (the parent reads stdout only) and exits with status 1.
    static func respond<R: Encodable>(_ run: () throws -> R) throws {
        let line: Data
        do { line = try JSONEncoder().encode(try run()) } catch {
            FileHandle.standardOutput.write(try JSONEncoder().encode(ChildFailure(error: "\(error)")) + Data("\n".utf8))
            throw ExitCode(1)
        }
        FileHandle.standardOutput.write(line + Data("\n".utf8))
    }
}

/// What a failed child prints instead of its result.
struct ChildFailure: Codable {
    var error: String
}
