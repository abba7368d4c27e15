import ArgumentParser
import Foundation
import StrataStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `strata-harness fuzz`: damages a real store file in seeded ways and checks that every damaged copy
/// either reads back as committed data or fails with a `StrataError`, never a trap, a hang, a
/// huge allocation or wrong data.
///
/// The parent builds the seed store once (several trees, thousands of keys, overflow values,
/// a checkpoint with commits after it, left as a crash leaves it), writes it and its expected
/// states to a temporary directory, and runs batches of cases in child processes
/// (`fuzz-worker`), each under an address-space limit (`RLIMIT_AS`) and a per-case timer
/// (`SIGALRM`). A child that dies (signal) or stops answering marks the case it was running as
/// a crash or a hang and is restarted at the next case.
struct FuzzCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fuzz",
        abstract: "Open thousands of damaged copies of a store; each must read correctly or fail cleanly.",
        discussion: """
            Mutations: bit flips, byte runs, truncations, appended garbage or stale frames, \
            frames copied over other frames, frame header and header slot fields set to \
            extremes (re-sealed or not), lost sectors/blocks, and offset fields inside frame \
            payloads set to extremes (re-sealed). Each case is opened read-only and read-write, \
            on a simulated file system and as a real file through the POSIX layer, and read \
            fully (every tree, cursor scans both ways, every value, point reads, check()). \
            Ends with `fuzz: N cases, X crashes, H hangs, K \
            typed errors` (wrong data is counted on the line before) and exits 1 if there were \
            crashes, hangs or wrong data.
            """)

    @Option(help: "Cases to run.")
    var iterations = 10_000

    @Option(help: "Seed of the store and the mutations.")
    var seed: UInt64 = 1

    @Option(help: "Per-case time limit in milliseconds (a case that exceeds it is a hang).")
    var timeoutMs = 5_000

    @Option(help: "Address-space limit of each worker process, in MiB.")
    var memoryMb = 1_024

    @Option(help: "Worker processes at once (default: one per CPU).")
    var jobs: Int?

    @Option(help: "Cases per worker process.")
    var batch = 5_000

    @Option(help: "Failures to describe on stderr.")
    var showFailures = 30

    @Option(help: ArgumentHelp("Run only the cases of one kind: case index % 12 (9–11: record cases).",
                               visibility: .hidden))
    var kind: Int?

    @Option(help: ArgumentHelp("Write seed stores for the libFuzzer target into this directory and exit.",
                               valueName: "dir"))
    var writeCorpus: String?

    @Option(help: ArgumentHelp("Write seed inputs for the record libFuzzer target (strata-fuzz-records) "
                                   + "into this directory and exit.",
                               valueName: "dir"))
    var writeRecordsCorpus: String?

    @Option(help: ArgumentHelp("Write the hostile regression inputs (Tests/FuzzRegressions) "
                                   + "into this directory and exit.",
                               valueName: "dir", visibility: .hidden))
    var writeRegressions: String?

    func validate() throws {
        if iterations < 1 { throw ValidationError("--iterations must be at least 1") }
        if timeoutMs < 1 { throw ValidationError("--timeout-ms must be at least 1") }
        if memoryMb < 64 { throw ValidationError("--memory-mb must be at least 64") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        if batch < 1 { throw ValidationError("--batch must be at least 1") }
    }

    func run() throws {
        if let writeRegressions {
            let written = try HostileFiles.write(to: writeRegressions, seed: seed)
            print("fuzz: wrote \(written) hostile inputs and their MANIFEST to \(writeRegressions)")
            return
        }
        if writeCorpus != nil || writeRecordsCorpus != nil {
            if let writeCorpus {
                let written = try FuzzCorpus.write(to: writeCorpus, seed: seed)
                print("fuzz: wrote \(written) seed stores to \(writeCorpus)")
            }
            if let writeRecordsCorpus {
                let written = try FuzzCorpus.writeRecords(to: writeRecordsCorpus, seed: seed)
                print("fuzz: wrote \(written) record seed inputs to \(writeRecordsCorpus)")
            }
            return
        }
        let start = monotonicSeconds()
        let fixture = try FuzzFixture.build(seed: seed)
        let dir = try makeTemporaryDirectory("strata-fuzz")
        try fixture.save(to: dir)
        let caseDirectory = try FuzzLayer.makeCaseDirectory("strata-fuzz-cases")
        defer { removeDirectory(caseDirectory) }
        let built = monotonicSeconds() - start
        let recordEntries = fixture.records.trees.reduce(0) { $0 + $1.entries.count }
        printError("fuzz: seed store \(fixture.bytes.count) bytes, \(fixture.frames.count) frames, "
                   + "\(fixture.full) commits after its checkpoint; "
                   + "record seed store \(fixture.records.trees.count) trees, \(recordEntries) entries "
                   + "(built in \(String(format: "%.2f", built))s)")
        let workers = jobs ?? max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        var tally = FuzzTally()
        try runWorkers(fixture: fixture, dir: dir, caseDirectory: caseDirectory, workers: workers, tally: &tally,
                       start: start)
        let elapsed = monotonicSeconds() - start
        let typed = tally.errorKinds.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }
            .joined(separator: ", ")
        print("fuzz: \(tally.cases) cases in \(String(format: "%.1f", elapsed))s "
              + "(\(String(format: "%.0f", Double(tally.cases) / max(elapsed, 1e-9))) cases/s, \(workers) workers): "
              + "\(tally.intact) intact, \(tally.prefix) committed prefix, "
              + "\(tally.typed) typed errors (\(typed.isEmpty ? "none" : typed)), "
              + "\(tally.checkFlagged) with check() problems")
        let byKind = tally.failuresByKind.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }
            .joined(separator: ", ")
        for (domain, name) in ["storage", "records"].enumerated() {
            let results = tally.byDomain[domain]
            let total = results.values.reduce(0, +)
            print("fuzz: \(name): \(total) cases, \(results["I", default: 0]) intact, "
                  + "\(results["P", default: 0]) committed prefix, \(results["C", default: 0]) flagged by their check, "
                  + "\(results["E", default: 0]) typed errors, \(results["W", default: 0]) wrong data, "
                  + "\(results["crash", default: 0]) crashes, \(results["hang", default: 0]) hangs")
        }
        print("fuzz: \(tally.wrong) wrong data\(byKind.isEmpty ? "" : " (failures by mutation: \(byKind))")")
        print("fuzz: \(tally.cases) cases, \(tally.crashes) crashes, \(tally.hangs) hangs, \(tally.typed) typed errors")
        if tally.crashes + tally.hangs + tally.wrong > 0 {
            printError("fuzz: fixture kept for reproduction: \(dir) "
                       + "(strata-harness fuzz-worker --fixture \(dir) --seed \(seed) --from CASE --count 1 --verbose)")
            throw ExitCode(1)
        }
        removeDirectory(dir)
    }

    /// Each case allocates and frees file images of a few hundred KB: glibc keeps them in the
    /// heap instead of an mmap/munmap (and page faults) each time. At most two malloc arenas:
    /// glibc gives a thread that finds the main arena busy an arena of its own, reserving 64 MiB
    /// of address space, up to eight per CPU; the stores' sync timers run on dispatch threads,
    /// and on a loaded machine enough arenas appeared to fill the 1 GiB address-space limit
    /// (a CI run: "failed to allocate 1040352 bytes" in two cases that pass alone, with the
    /// worker's resident size under 50 MiB). A crashing worker prints no backtrace (the
    /// reproduction command does).
    static let workerEnvironment = [
        "GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456"
            + ":glibc.malloc.arena_max=2",
        "SWIFT_BACKTRACE": "enable=no",
    ]

    struct FuzzTally {
        var cases = 0
        var intact = 0
        var prefix = 0
        var typed = 0
        var wrong = 0
        var crashes = 0
        var hangs = 0
        var checkFlagged = 0
        var errorKinds: [String: Int] = [:]
        /// Per domain (storage, records): cases per result code (I, C, P, E, W, crash, hang).
        var byDomain: [[String: Int]] = [[:], [:]]
        /// Failures (wrong data, crashes, hangs) per mutation kind.
        var failuresByKind: [String: Int] = [:]
        var reported = 0
    }

    /// Hands out batches to `workers` children at a time; a batch cut short by a dead child
    /// goes back to the queue from the case after the one it died on.
    func runWorkers(fixture: FuzzFixture, dir: String, caseDirectory: String, workers: Int, tally: inout FuzzTally,
                    start: Double) throws {
        struct Running {
            var child: ChildProcess
            var next: Int
            var end: Int
            var lastHeard: Double
            var killedForTime = false
        }
        var queue: [(Int, Int)] = []
        let size = max(1, min(batch, (iterations + workers - 1) / workers))
        var from = 0
        while from < iterations {
            queue.append((from, min(iterations, from + size)))
            from += size
        }
        var running: [Running] = []
        var nextProgress = 50_000
        var lastProgressTime = start
        // A child stuck where SIGALRM cannot end it is killed from here.
        let backstop = Double(timeoutMs) / 1000 * 2 + 10

        // Every failure, also those not shown, goes to failures.txt beside the kept fixture.
        let failureLog = open(dir + "/failures.txt", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        defer { if failureLog >= 0 { close(failureLog) } }
        func report(_ index: Int, _ text: String) {
            tally.failuresByKind[FuzzCase.kindName(index), default: 0] += 1
            tally.reported += 1
            let what = FuzzCase.caseDescription(fixture, seed: seed, index: index)
            if tally.reported <= showFailures { printError("fuzz: case \(index) (\(what)): \(text)") }
            if tally.reported == showFailures {
                printError("fuzz: (further failures not shown; all are in \(dir)/failures.txt)")
            }
            if failureLog >= 0 {
                let line = Array("case \(index) (\(what)): \(text)\n".utf8)
                _ = line.withUnsafeBytes { write(failureLog, $0.baseAddress, $0.count) }
            }
        }

        while !queue.isEmpty || !running.isEmpty {
            while running.count < workers, !queue.isEmpty {
                let (batchStart, batchEnd) = queue.removeFirst()
                let child = try ChildProcess(arguments: [
                    "fuzz-worker", "--fixture", dir, "--seed", String(seed), "--from", String(batchStart),
                    "--count", String(batchEnd - batchStart), "--timeout-ms", String(timeoutMs),
                    "--memory-mb", String(memoryMb), "--case-directory", caseDirectory,
                ] + (kind.map { ["--kind", String($0)] } ?? []), environment: FuzzCommand.workerEnvironment)
                running.append(Running(child: child, next: batchStart, end: batchEnd, lastHeard: monotonicSeconds()))
            }
            var fds = running.map { pollfd(fd: $0.child.output, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), 1000)
            if ready < 0 && errno != EINTR { throw ToolError("poll failed: errno \(errno)") }
            let now = monotonicSeconds()
            var finished: [Int] = []
            for i in running.indices {
                if fds[i].revents != 0 {
                    running[i].child.fill()
                    running[i].lastHeard = now
                    for line in running[i].child.bufferedLines() {
                        let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
                        guard parts.count >= 2, let index = Int(parts[0]), index >= running[i].next else {
                            printError("fuzz: unexpected worker output: \(line)")
                            continue
                        }
                        running[i].next = index + 1
                        tally.cases += 1
                        tally.byDomain[FuzzCase.isRecordCase(index) ? 1 : 0][parts[1], default: 0] += 1
                        let detail = parts.count > 2 ? parts[2] : ""
                        switch parts[1] {
                        case "I": tally.intact += 1
                        case "P": tally.prefix += 1
                        case "C": tally.intact += 1; tally.checkFlagged += 1
                        case "E":
                            tally.typed += 1
                            let kind = String(detail.prefix { $0 != " " && $0 != ":" })
                            tally.errorKinds[kind, default: 0] += 1
                        default:
                            tally.wrong += 1
                            report(index, "WRONG DATA: \(detail)")
                        }
                    }
                }
                if running[i].child.atEOF {
                    finished.append(i)
                } else if now - running[i].lastHeard > backstop && !running[i].killedForTime {
                    running[i].child.kill()
                    running[i].killedForTime = true
                }
            }
            for i in finished.reversed() {
                var run = running.remove(at: i)
                let status = run.child.wait()
                // The case it was running when it died (or that it never answered).
                if let kind { while run.next % FuzzCase.cycle != kind { run.next += 1 } }
                guard run.next < run.end else { continue }
                tally.cases += 1
                let domain = FuzzCase.isRecordCase(run.next) ? 1 : 0
                if run.killedForTime || status.signal == SIGALRM {
                    tally.byDomain[domain]["hang", default: 0] += 1
                    tally.hangs += 1
                    let why = run.killedForTime
                        ? "no answer for \(String(format: "%.0f", backstop))s" : "over \(timeoutMs)ms"
                    report(run.next, "HANG (\(why))")
                } else {
                    tally.byDomain[domain]["crash", default: 0] += 1
                    tally.crashes += 1
                    report(run.next, "CRASH (worker \(status))")
                }
                if run.next + 1 < run.end { queue.insert((run.next + 1, run.end), at: 0) }
            }
            if tally.cases >= nextProgress || now - lastProgressTime > 60 {
                while nextProgress <= tally.cases { nextProgress += 50_000 }
                lastProgressTime = now
                let elapsed = now - start
                printError("fuzz: \(tally.cases)/\(iterations) cases, \(tally.crashes) crashes, \(tally.hangs) hangs, "
                           + "\(tally.wrong) wrong, \(tally.typed) typed errors (\(String(format: "%.0f", elapsed))s, "
                           + "\(String(format: "%.0f", Double(tally.cases) / elapsed)) cases/s)")
            }
        }
    }
}
