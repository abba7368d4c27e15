import StrataStorage
import StrataTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: Child processes

/// A child process running this binary with other arguments, its stdout on a pipe.
final class ChildProcess {
    let pid: pid_t
    /// The read end of the child's stdout.
    let output: Int32
    private var buffer: [UInt8] = []
    private(set) var atEOF = false

    /// Runs `program` (by default this binary again, `/proc/self/exe`) with `arguments` (for
    /// this binary, the subcommand first). The child's stdout is a pipe; stdin and stderr are
    /// inherited.
    init(program: String = "/proc/self/exe", arguments: [String], environment: [String: String] = [:]) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw ToolError("pipe failed: errno \(errno)") }
        // Neither end leaks into other children; dup2 gives the child's stdout without the flag.
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        let name = program == "/proc/self/exe" ? "strata-harness" : program
        let argv: [UnsafeMutablePointer<CChar>?] = ([name] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var env: [UnsafeMutablePointer<CChar>?] = []
        var cursor = environ
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "="), environment[String(text[..<equals])] != nil {} else {
                env.append(strdup(entry))
            }
            cursor += 1
        }
        env += environment.map { strdup("\($0.key)=\($0.value)") }
        env.append(nil)
        defer { for pointer in env { free(pointer) } }
        var child: pid_t = 0
        let spawnResult = posix_spawn(&child, program, &actions, nil, argv, env)
        close(fds[1])
        guard spawnResult == 0 else {
            close(fds[0])
            throw ToolError("cannot start a child process: errno \(spawnResult)")
        }
        pid = child
        output = fds[0]
    }

    /// The next complete line of output, waiting at most `timeoutMilliseconds` (-1: forever).
    /// `nil` on timeout or at end of output (see ``atEOF``).
    func readLine(timeoutMilliseconds: Int32) -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            if atEOF { return nil }
            var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, timeoutMilliseconds)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { return nil }
            fill()
        }
    }

    /// Reads what is available now (after `poll` said so); sets ``atEOF`` at the end.
    func fill() {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
        if count > 0 {
            buffer += chunk[..<count]
        } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
            atEOF = true
        }
    }

    /// Complete lines already buffered.
    func bufferedLines() -> [String] {
        var lines: [String] = []
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: buffer[..<newline], as: UTF8.self))
            buffer.removeSubrange(...newline)
        }
        return lines
    }

    func kill(_ signal: Int32 = SIGKILL) { sendSignal(signal, to: pid) }

    /// Waits for the child to end; closes the pipe.
    func wait() -> ExitStatus {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        close(output)
        return ExitStatus(raw: status)
    }
}

/// Writes a line to stdout (or `descriptor`) at once (no buffering: a parent reads it while
/// this process may die).
func writeLineUnbuffered(_ text: String, to descriptor: Int32 = 1) {
    var bytes = Array(text.utf8)
    bytes.append(UInt8(ascii: "\n"))
    var done = 0
    while done < bytes.count {
        let written = bytes[done...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written <= 0 {
            if written < 0 && errno == EINTR { continue }
            break
        }
        done += written
    }
}

/// Writes a line to stderr: progress, failures and diagnostics (the summaries go to stdout).
func printError(_ text: String) { writeLineUnbuffered(text, to: 2) }

/// Monotonic seconds.
func monotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// A fresh private directory under `$TMPDIR` (or /tmp).
func makeTemporaryDirectory(_ prefix: String) throws -> String {
    let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
    guard let path = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw ToolError("cannot create a temporary directory under \(base): errno \(errno)")
    }
    return String(cString: path)
}

/// Removes `dir` and everything inside it.
func removeDirectory(_ dir: String) { removeFuzzCaseDirectory(dir) }

/// Creates `dir` and any missing parents (`mkdir -p`).
func makeDirectories(_ dir: String) throws {
    var path = dir.hasPrefix("/") ? "" : "."
    for part in dir.split(separator: "/") {
        path += "/" + part
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            throw ToolError("cannot create \(path): errno \(errno)")
        }
    }
}

func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw ToolError("cannot create \(path): errno \(errno)") }
    defer { close(fd) }
    var done = 0
    while done < bytes.count {
        let written = bytes[done...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written > 0 else { throw ToolError("cannot write \(path): errno \(errno)") }
        done += written
    }
}

func readFile(_ path: String) throws -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw ToolError("cannot open \(path): errno \(errno)") }
    defer { close(fd) }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 { throw ToolError("cannot read \(path): errno \(errno)") }
        if count == 0 { return out }
        out += chunk[..<count]
    }
}

/// `kill(2)`, named apart: ``ChildProcess/kill(_:)`` shadows it inside the class.
func sendSignal(_ signal: Int32, to pid: pid_t) { _ = kill(pid, signal) }

/// How a child ended (`waitpid`'s status word).
struct ExitStatus: CustomStringConvertible {
    let raw: Int32
    var signal: Int32? { (raw & 0x7F) != 0 && (raw & 0x7F) != 0x7F ? raw & 0x7F : nil }
    var exitCode: Int32? { (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : nil }
    var description: String {
        if let signal { return "killed by signal \(signal)" + (signal == SIGALRM ? " (SIGALRM: timeout)" : "") }
        return "exit code \(exitCode ?? -1)"
    }
}
