import Foundation

/// One run of `strata replicate STORE --to URL --json` without `--follow`, as the benchmark
/// measured it: the push's line and what the tool and the server spent on it.
struct ReplicatePush {
    var line: PushLine
    var exit: ToolProcess.Exit
    var cpu: CPUShares

    /// Runs the tool once against `url` and waits for it. Throws when it fails or prints
    /// anything but one push's line.
    static func run(tool: String, store: String, url: String, batch: Int, password: String, postgres: PostgresCPU?)
        throws -> ReplicatePush {
        let window = CPUShares.Window(postgres: postgres)
        let process = try ToolProcess(tool, ["replicate", store, "--to", url, "--batch", String(batch), "--json"],
                                      environment: ["PGPASSWORD": password])
        let exit = process.wait()
        let cpu = window.finish(exit)
        guard exit.exitedCleanly else { throw BenchError("`\(process.commandLine)` failed (\(exit.description))") }
        let lines = process.lines.compactMap(PushLine.init)
        guard lines.count == 1, let line = lines.first else {
            throw BenchError("`\(process.commandLine)` printed \(lines.count) push lines: \(process.lines)")
        }
        return ReplicatePush(line: line, exit: exit, cpu: cpu)
    }
}
