import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `strata` running as a child process: its stdout read line by line as it comes (on a thread
/// of its own, so a follower's pushes can be watched while this process commits), its stderr
/// passed through to ours, and, when it ends, its resources from `wait4`: the CPU time it used
/// and its peak RSS, its own and no other child's (``ChildSpawn``).
final class ToolProcess: Sendable {
    /// How the child ended, and what it used.
    struct Exit {
        /// `wait4`'s raw status.
        var status: Int32
        /// User and system CPU time, in seconds.
        var cpuSeconds: Double
        var peakRSSBytes: Int
        /// From the spawn to the end.
        var wallSeconds: Double

        var exitedCleanly: Bool { status & 0x7F == 0 && (status >> 8) & 0xFF == 0 }
        var signal: Int32? { status & 0x7F != 0 ? status & 0x7F : nil }

        var description: String {
            signal.map { "killed by signal \($0)" } ?? "exit status \((status >> 8) & 0xFF)"
        }
    }

    let pid: pid_t
    let commandLine: String
    private let started = Measure.now()
    /// The stdout lines read so far, and whether the reader met the end of the pipe.
    private let output = Mutex<(lines: [String], ended: Bool)>(([], false))
    private let readerDone = DispatchSemaphore(value: 0)

    /// Starts `program arguments` with `environment` added to ours.
    init(_ program: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        let child = try ChildSpawn(program, arguments, environment: environment, withInput: false)
        pid = child.pid
        commandLine = ([program] + arguments).joined(separator: " ")
        let output = child.output
        Thread.detachNewThread { [self] in readLines(output) }
    }

    /// Reads the child's stdout until the end of the pipe, line by line into ``lines``.
    private func readLines(_ fd: Int32) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            pending += buffer[..<n]
            var complete: [String] = []
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                complete.append(String(decoding: pending[..<newline], as: UTF8.self))
                pending.removeSubrange(...newline)
            }
            if !complete.isEmpty { output.withLock { $0.lines += complete } }
        }
        close(fd)
        let last = pending.isEmpty ? [] : [String(decoding: pending, as: UTF8.self)]
        output.withLock {
            $0.lines += last
            $0.ended = true
        }
        readerDone.signal()
    }

    /// The stdout lines read so far.
    var lines: [String] { output.withLock { $0.lines } }

    /// Waits until a line read satisfies `condition` (true), the output ends or `timeout`
    /// seconds pass (false). Polls every millisecond: what is timed is the child's own figure,
    /// not when this process notices it.
    func waitForLine(timeout: Double, _ condition: (String) -> Bool) -> Bool {
        let deadline = Measure.now() + UInt64(timeout * 1e9)
        var checked = 0
        while true {
            let (lines, ended) = output.withLock { ($0.lines, $0.ended) }
            if lines[checked...].contains(where: condition) { return true }
            checked = lines.count
            if ended || Measure.now() >= deadline { return false }
            usleep(1_000)
        }
    }

    /// Asks the child to stop (SIGINT, as a terminal's ^C): `strata replicate --follow` has
    /// flushed every line it printed.
    func interrupt() { kill(pid, SIGINT) }

    /// Waits for the child to end, and for its last line to be read. A child still running
    /// after `timeout` seconds is killed (SIGKILL): a benchmark that hangs reports nothing.
    func wait(timeout: Double = 600) -> Exit {
        var status: Int32 = 0
        var usage = rusage()
        let deadline = Measure.now() + UInt64(timeout * 1e9)
        while true {
            let ended = wait4(pid, &status, WNOHANG, &usage)
            if ended == pid || (ended < 0 && errno != EINTR) { break }
            if Measure.now() >= deadline {
                log("  … \(commandLine): still running after \(Int(timeout)) s, killed")
                kill(pid, SIGKILL)
                while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
                break
            }
            usleep(1_000)
        }
        let wall = Double(Measure.now() - started) / 1e9
        readerDone.wait()
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return Exit(status: status, cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime),
                    peakRSSBytes: Int(usage.ru_maxrss) * 1024, wallSeconds: wall)
    }
}
