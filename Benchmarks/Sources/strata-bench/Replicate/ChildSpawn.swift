import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, its stdout a pipe to this process and its stdin
/// either a pipe from it or `/dev/null`; its stderr is ours. Rather than Foundation's
/// `Process`, which reaps the child itself: ``ToolProcess`` needs the child's own resource
/// usage from `wait4`.
struct ChildSpawn {
    let pid: pid_t
    /// The read end of the child's stdout.
    let output: Int32
    /// The write end of the child's stdin, when asked for.
    let input: Int32?

    /// Starts `program arguments` with `environment` added to ours.
    init(_ program: String, _ arguments: [String], environment: [String: String], withInput: Bool) throws {
        let stdout = try Self.pipe()
        let stdin = withInput ? try Self.pipe() : nil
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin {
            posix_spawn_file_actions_adddup2(&actions, stdin.read, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        // dup2 clears close-on-exec on the copy: the child's stdout is the pipe, and the
        // originals close at exec.
        posix_spawn_file_actions_adddup2(&actions, stdout.write, 1)
        let argv = [program] + arguments
        let cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let cEnvironment: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in cEnvironment { free(pointer) } }
        // A clean signal state: a child inherits the spawning thread's blocked signals (this
        // process, itself started by Foundation's `Process` in the tests, had SIGINT and SIGTERM
        // blocked, and a follower could not be stopped) and ignored ones (SIGPIPE, which
        // ``TokenWatcher`` ignores here).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var child: pid_t = 0
        let spawned = posix_spawn(&child, program, &actions, &attributes, cArguments, cEnvironment)
        close(stdout.write)
        if let stdin { close(stdin.read) }
        guard spawned == 0 else {
            close(stdout.read)
            if let stdin { close(stdin.write) }
            throw BenchError("cannot run \(program): errno \(spawned)")
        }
        pid = child
        output = stdout.read
        input = stdin?.write
    }

    /// A pipe whose ends close on exec (`pipe2` is not in Swift's Glibc): no other child
    /// inherits them.
    private static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard Glibc.pipe(&fds) == 0 else { throw BenchError("pipe failed: errno \(errno)") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }
}
