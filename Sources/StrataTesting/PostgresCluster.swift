import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL cluster for the tests and the harness: `initdb` in a temporary directory (as the
/// `postgres` user when the tests run as root, which `initdb` refuses), a server on a loopback
/// port with password logins (SCRAM) and TLS (a self-signed certificate for `localhost` and
/// 127.0.0.1, made with `openssl`), `fsync=off`. Started once per test process, on first use,
/// and stopped when the process exits. Each test takes a database of its own.
package final class PostgresCluster: Sendable {
    package let directory: String
    package let port: Int
    package let binDirectory: String
    package let runAsPostgres: Bool
    package let user = "strata"
    package let password = "s3cret-for-tests"
    private let nextDatabase = Atomic<Int>(1)

    /// The cluster of this process.
    package static var shared: PostgresCluster {
        get throws {
            try started.withLock { cluster in
                if let cluster { return cluster }
                let fresh = try PostgresCluster()
                cluster = fresh
                atexit { PostgresCluster.stopShared() }
                return fresh
            }
        }
    }

    private static let started = Mutex<PostgresCluster?>(nil)

    /// A cluster of the caller's own (a test that restarts its server must not restart the
    /// one other suites use); ``stop()`` ends it.
    package static func privateCluster() throws -> PostgresCluster {
        try PostgresCluster()
    }

    private static func stopShared() {
        if let cluster = started.withLock({ $0 }) { cluster.stop() }
    }

    /// The server's TLS certificate (its own authority): `sslrootcert` for `verify-full`.
    package var certificatePath: String { directory + "/server.crt" }

    private init() throws {
        guard let bin = PostgresCluster.findBinaries() else {
            throw ClusterError("PostgreSQL's binaries (initdb, pg_ctl) are not installed: apt-get install postgresql")
        }
        binDirectory = bin
        runAsPostgres = getuid() == 0
        var template = Array("/tmp/strata-pg-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw ClusterError("mkdtemp failed")
        }
        directory = String(cString: made)
        try "\(password)\n".write(toFile: directory + "/pw", atomically: true, encoding: .utf8)
        try PostgresCluster.run("/usr/bin/openssl", ["req", "-new", "-x509", "-days", "2", "-nodes", "-subj", "/CN=localhost",
                                                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                                                    "-keyout", directory + "/server.key", "-out", directory + "/server.crt"])
        chmod(directory + "/server.key", 0o600)
        if runAsPostgres { try PostgresCluster.run("/bin/chown", ["-R", "postgres:postgres", directory]) }
        try PostgresCluster.run(binDirectory + "/initdb", ["-D", directory + "/data", "-A", "scram-sha-256", "-U", user,
                                                           "--pwfile=" + directory + "/pw", "-E", "UTF8"],
                                asPostgres: runAsPostgres)
        var chosen = 0
        for attempt in 0..<20 {
            let port = Int.random(in: 20_000..<60_000)
            let options = "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off "
                + "-c ssl=on -c ssl_cert_file=\(directory)/server.crt -c ssl_key_file=\(directory)/server.key"
            do {
                try PostgresCluster.run(binDirectory + "/pg_ctl", ["-D", directory + "/data", "-o", options,
                                                                   "-l", directory + "/log", "-w", "start"],
                                        asPostgres: runAsPostgres)
                chosen = port
                break
            } catch where attempt < 19 {
                continue
            }
        }
        port = chosen
    }

    /// The binaries' directory: Debian's newest `/usr/lib/postgresql/N/bin`, else `PATH`'s.
    private static func findBinaries() -> String? {
        let base = "/usr/lib/postgresql"
        if let versions = try? FileManager.default.contentsOfDirectory(atPath: base) {
            for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) })
            where FileManager.default.isExecutableFile(atPath: "\(base)/\(version)/bin/initdb") {
                return "\(base)/\(version)/bin"
            }
        }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        where FileManager.default.isExecutableFile(atPath: "\(directory)/initdb") {
            return String(directory)
        }
        return nil
    }

    /// Stops the server as a crash would (`immediate`: no checkpoint, every connection dropped)
    /// and starts it again on the same port; returns once it accepts connections (it recovered
    /// from its log).
    package func restart() throws {
        try PostgresCluster.run(binDirectory + "/pg_ctl", ["-D", directory + "/data", "-m", "immediate", "-l",
                                                           directory + "/log", "-w", "restart"],
                                asPostgres: runAsPostgres)
    }

    package func stop() {
        _ = try? PostgresCluster.run(binDirectory + "/pg_ctl", ["-D", directory + "/data", "-m", "immediate", "-w", "stop"],
                                     asPostgres: runAsPostgres)
        _ = try? FileManager.default.removeItem(atPath: directory)
    }

    /// A fresh database; its URL (the password left out: tests give it as each case needs).
    package func makeDatabase() throws -> (name: String, url: String) {
        let name = "test_\(getpid())_\(nextDatabase.add(1, ordering: .relaxed).oldValue)"
        _ = try psql("CREATE DATABASE \(name)", database: "postgres")
        return (name, "postgres://\(user)@127.0.0.1:\(port)/\(name)")
    }

    /// Runs `sql` with `psql` (unaligned, tuples only) and returns what it printed.
    @discardableResult
    package func psql(_ sql: String, database: String) throws -> String {
        try PostgresCluster.run("/usr/bin/psql", ["-h", "127.0.0.1", "-p", String(port), "-U", user, "-d", database,
                                                 "-At", "-v", "ON_ERROR_STOP=1", "-c", sql],
                                environment: ["PGPASSWORD": password])
    }

    /// Runs a program and returns its output (standard output and error); throws with it when
    /// the program fails. `posix_spawn` and `waitpid`, with the output in a file, not a pipe:
    /// the server `pg_ctl` starts inherits the descriptors, and a pipe would not reach its end
    /// while the server runs (Foundation's `Process` also left `pg_ctl` unreaped here).
    @discardableResult
    package static func run(_ program: String, _ arguments: [String], asPostgres: Bool = false,
                    environment: [String: String] = [:]) throws -> String {
        let argv = asPostgres ? ["/usr/sbin/runuser", "-u", "postgres", "--", program] + arguments : [program] + arguments
        let outputPath = NSTemporaryDirectory() + "strata-pg-output-\(UUID().uuidString)"
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let cEnvironment: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in cEnvironment { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, cArguments, cEnvironment)
        guard spawned == 0 else { throw ClusterError("cannot run \(argv[0]): errno \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        // Exited normally with status 0.
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
            throw ClusterError("\(program) \(arguments.prefix(3).joined(separator: " ")) failed (\(status)): \(text)")
        }
        return text
    }
}

package struct ClusterError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
