import Foundation
import Testing
import StrataStorage
import Synchronization

/// Regression: read-only opens of a live store reported false corruption ("invalid
/// frame followed by a valid frame written after it was durable") about one time in three
/// beside a writer at `.full` durability. Two real processes: `strata-harness write-load`
/// commits in a loop while this process opens the store read-only again and again; every open
/// must succeed and show exactly the state after some commit, never older than the previous
/// open's. The `strata` commands that open read-only (check, dump, info) run beside it too.
@Suite(.serialized) struct LiveReaderTests {
    static let opens = 1000
    static let readers = 4
    /// The readers go on past `opens` until the writer has committed this many times under them.
    static let commitsDuringOpens: UInt64 = 100

    /// What the reader threads share: opens so far, the newest commit any of them saw.
    final class Progress: Sendable {
        let state = Mutex<(opens: Int, newest: UInt64)>((0, 0))
        let firstSeen: UInt64
        let deadline: ContinuousClock.Instant

        init(firstSeen: UInt64, deadline: ContinuousClock.Instant) {
            self.firstSeen = firstSeen
            self.deadline = deadline
        }

        /// Counts one open that saw commit `n`; whether the readers should go on: until there
        /// were `opens` opens and the writer committed `commitsDuringOpens` times meanwhile (or
        /// the deadline passed).
        func record(_ n: UInt64) -> Bool {
            let (opens, newest) = state.withLock { s in
                s.opens += 1
                s.newest = max(s.newest, n)
                return (s.opens, s.newest)
            }
            let enough = opens >= LiveReaderTests.opens && newest >= firstSeen + LiveReaderTests.commitsDuringOpens
            return !enough && ContinuousClock.now < deadline
        }
    }

    /// The commit the store holds now (its `seq`), read through one read-only open.
    static func readState(_ path: String) throws -> (commit: UInt64, content: [[UInt8]: [UInt8]]) {
        var options = StoreOptions()
        options.readOnly = true
        options.cacheBytes = 1 << 20
        let store = try Store(path: path, options: options)
        defer { try? store.close() }
        let content: [[UInt8]: [UInt8]] = try store.read { tx in
            var out: [[UInt8]: [UInt8]] = [:]
            guard let t = try tx.tree("load") else { return out }
            let c = t.makeCursor()
            var ok = try c.first()
            while ok {
                out[c.copyKey()] = try c.copyValue()
                ok = try c.next()
            }
            return out
        }
        let n = content[Array("seq".utf8)].map { $0.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } } ?? 0
        return (n, content)
    }

    /// Opens the store read-only again and again, reading tree "load" each time, while
    /// `progress` says so; returns what went wrong and the commits seen. Each open must show
    /// the state after one commit, never older than the one before it.
    static func openRepeatedly(_ path: String, progress: Progress, reader: Int) -> ([String], Set<UInt64>) {
        var model = LoadModel()
        var failures: [String] = []
        var seen = Set<UInt64>()
        var i = 0
        var goOn = true
        while goOn && failures.count < 5 {
            i += 1
            do {
                let (n, content) = try readState(path)
                goOn = progress.record(n)
                if n < model.commits {
                    failures.append("reader \(reader) open \(i): state of commit \(n) after an open that saw commit \(model.commits)")
                    continue
                }
                model.advance(to: n)
                seen.insert(n)
                if content != model.entries {
                    failures.append("reader \(reader) open \(i): content is not the state after commit \(n)")
                }
            } catch {
                goOn = progress.record(0)
                failures.append("reader \(reader) open \(i): \(error)")
            }
        }
        return (failures, seen)
    }

    /// The writer's workload (`WriteLoadCommand`), replayed here to know each commit's state.
    struct LoadModel {
        private(set) var commits: UInt64 = 0
        private(set) var entries: [[UInt8]: [UInt8]] = [:]

        static func key(_ i: UInt64) -> [UInt8] {
            let digits = String(i)
            return Array(("k" + String(repeating: "0", count: max(0, 3 - digits.count)) + digits).utf8)
        }

        mutating func advance(to n: UInt64) {
            while commits < n {
                commits += 1
                let c = commits
                entries[Array("seq".utf8)] = withUnsafeBytes(of: c.bigEndian) { Array($0) }
                entries[LoadModel.key(c % 200)] = (0..<(c % 90 + 1)).map { UInt8(truncatingIfNeeded: c &+ $0) }
                if c % 10 == 0 { entries[Array("big".utf8)] = [UInt8](repeating: UInt8(truncatingIfNeeded: c), count: 3000) }
                if c % 7 == 0 { entries[LoadModel.key((c + 100) % 200)] = nil }
            }
        }
    }

    @Test(arguments: ["full", "normal"])
    func readOnlyOpensBesideALiveWriterSeeCommittedPrefixes(durability: String) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-live-\(getpid())-\(durability)").path
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/live.strata"
        let stop = dir + "/stop"

        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: Tool.productsDirectory + "/strata-harness")
        writer.arguments = ["write-load", path, "--stop-file", stop, "--durability", durability]
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        writer.environment = environment
        let out = Pipe()
        let err = Pipe()
        writer.standardOutput = out
        writer.standardError = err
        try writer.run()
        var writerStopped = false
        func stopWriter() -> (status: Int32, stdout: String, stderr: String) {
            _ = FileManager.default.createFile(atPath: stop, contents: nil)
            let group = DispatchGroup()
            nonisolated(unsafe) var errData = Data()
            DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
            let outData = out.fileHandleForReading.readDataToEndOfFile()
            group.wait()
            writer.waitUntilExit()
            writerStopped = true
            return (writer.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
        }
        defer { if !writerStopped { _ = stopWriter() } }

        // The writer creates the file by a rename: once it exists, it is a whole store. Wait
        // for its first commits, so the opens below race a writer in full swing.
        let started = ContinuousClock.now
        while !FileManager.default.fileExists(atPath: path) {
            try #require(ContinuousClock.now - started < .seconds(30), "the writer did not create \(path)")
            usleep(1_000)
        }
        var first = try LiveReaderTests.readState(path).commit
        while first < 10 {
            try #require(ContinuousClock.now - started < .seconds(30), "the writer does not commit")
            usleep(2_000)
            first = try LiveReaderTests.readState(path).commit
        }
        let progress = Progress(firstSeen: first, deadline: .now + .seconds(20))

        // Reader threads, more of them than cores: a reader descheduled between reading the end
        // of the log and looking past it is what lets the writer append under it. Beside them, the
        // tool's read-only commands (check, info, dump) in a loop, each a process of its own.
        let results = Mutex<(failures: [String], seen: Set<UInt64>, toolRuns: Int)>(([], [], 0))
        let readersDone = Atomic<Bool>(false)
        let group = DispatchGroup()
        for r in 0..<LiveReaderTests.readers {
            group.enter()
            Thread {
                let (failures, seen) = LiveReaderTests.openRepeatedly(path, progress: progress, reader: r)
                results.withLock { $0.failures += failures; $0.seen.formUnion(seen) }
                group.leave()
            }.start()
        }
        let tools = DispatchGroup()
        tools.enter()
        Thread {
            let commands = [["check", path], ["info", path], ["dump", path, "--tree", "load", "--limit", "3"]]
            var i = 0
            // Each command at least twice, more while the readers run.
            while (i < 6 || !readersDone.load(ordering: .acquiring)) && i < 60 {
                let command = commands[i % commands.count]
                i += 1
                do {
                    let run = try Tool.run("strata", command)
                    if run.status != 0 {
                        results.withLock { $0.failures.append("strata \(command[0]): exit \(run.status): \(run.stdout)\(run.stderr)") }
                    }
                } catch {
                    results.withLock { $0.failures.append("strata \(command[0]): \(error)") }
                }
                results.withLock { $0.toolRuns += 1 }
            }
            tools.leave()
        }.start()
        group.wait()
        readersDone.store(true, ordering: .releasing)
        tools.wait()
        let (failures, seen, toolRuns) = results.withLock { ($0.failures, $0.seen, $0.toolRuns) }
        let (status, stdout, stderr) = stopWriter()
        #expect(status == 0, "writer: \(stderr)")
        let commits = stdout.split(separator: "\n").last { $0.hasPrefix("write-load: ") }
            .flatMap { UInt64($0.dropFirst("write-load: ".count).prefix { $0.isNumber }) } ?? 0
        #expect(failures.isEmpty, "\(durability): \(failures.count) failed opens: \(failures)")
        // The opens raced a writer that made progress under them, or the test proves nothing.
        let (opens, newest) = progress.state.withLock { ($0.opens, $0.newest) }
        #expect(opens >= LiveReaderTests.opens, "\(durability): \(opens) opens")
        #expect(newest >= first + LiveReaderTests.commitsDuringOpens, "\(durability): the writer committed only \(newest - first) times under the opens")
        #expect(seen.count >= 20, "\(durability): \(opens) opens saw only \(seen.count) distinct commits")
        print("LiveReaderTests (\(durability)): \(opens) opens, \(seen.count) distinct states, commits \(first)...\(newest) under them, \(toolRuns) tool runs, writer \(commits) commits")
    }
}
