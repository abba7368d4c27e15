import ArgumentParser
import StrataStorage
import StrataTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `strata-harness fuzz-worker` (hidden): runs cases `from..<from+count` and prints one line per case:
/// `INDEX CODE DETAIL` with CODE `I` (intact), `C` (intact, check() reported damage), `P`
/// (an allowed committed prefix), `E` (a `StrataError`), `W` (wrong data).
struct FuzzWorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fuzz-worker", abstract: "Worker process for fuzz.", shouldDisplay: false)

    @Option(help: "Directory holding the parent's seed store (built afresh when omitted).")
    var fixture: String?
    @Option var seed: UInt64
    @Option var from: Int
    @Option var count: Int
    @Option var timeoutMs = 5_000
    @Option var memoryMb = 1_024
    @Flag(help: "Describe each case and both opens on stderr.")
    var verbose = false
    @Option(help: "Run only the cases of this mutation kind (case index % 12; 9–11 are record cases).")
    var kind: Int?
    @Option(help: "Directory for the case files the POSIX layer opens (a fresh one when omitted).")
    var caseDirectory: String?

    func run() throws {
        let seedFixture = try fixture.map { try FuzzFixture.load(from: $0) } ?? FuzzFixture.build(seed: seed)
        let ownDirectory = caseDirectory == nil
        let cases = try caseDirectory ?? FuzzLayer.makeCaseDirectory("strata-fuzz-worker")
        // One case file per worker: workers may share the directory.
        let posixDirectory = cases + "/worker-\(getpid())"
        if mkdir(posixDirectory, 0o700) != 0 && errno != EEXIST {
            throw ToolError("cannot create \(posixDirectory): errno \(errno)")
        }
        defer {
            removeDirectory(posixDirectory)
            if ownDirectory { removeDirectory(cases) }
        }
        var limit = rlimit(rlim_cur: rlim_t(memoryMb) << 20, rlim_max: rlim_t(memoryMb) << 20)
        if setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit) != 0 {
            printError("fuzz-worker: setrlimit failed: errno \(errno)")
        }
        for index in from..<(from + count) {
            if let kind, index % FuzzCase.cycle != kind { continue }
            setTimer(milliseconds: timeoutMs)
            if FuzzCase.isRecordCase(index) {
                let line = recordCase(seedFixture, index: index, posixDirectory: posixDirectory)
                setTimer(milliseconds: 0)
                writeLineUnbuffered("\(index) \(line)")
                continue
            }
            let fuzzCase = FuzzCase.make(seedFixture, seed: seed, index: index)
            let outcomes = FuzzCase.examineAll(fuzzCase.bytes, posixDirectory: posixDirectory, fixture: seedFixture)
            setTimer(milliseconds: 0)
            let line = FuzzCase.judge(fuzzCase, outcomes: outcomes, fixture: seedFixture)
            if verbose {
                printError("case \(index): \(fuzzCase.what); allowed \(fuzzCase.allowed.sorted()); "
                           + outcomes.map { "\($0.0): \($0.1)" }.joined(separator: "; ") + " => \(line)")
            }
            writeLineUnbuffered("\(index) \(line)")
        }
    }

    /// Runs record case `index` and returns its line.
    private func recordCase(_ fixture: FuzzFixture, index: Int, posixDirectory: String) -> String {
        let (image, what) = RecordsFuzzCase.make(fixture.records, seed: seed, index: index,
                                                 kind: FuzzCase.recordKind(index))
        let bytes: [UInt8]
        do {
            bytes = try image.storeBytes()
        } catch {
            return "W the storage engine failed to write the damaged record store: \(error)"
        }
        guard let model = try? todoModel() else { return "W the TodoList model does not build" }
        let outcomes = RecordsFuzzCase.examineAll(bytes, posixDirectory: posixDirectory, model: model)
        let line = RecordsFuzzCase.judge(outcomes)
        if verbose {
            printError("case \(index): records: \(what); "
                       + outcomes.map { "\($0.0): \($0.1)" }.joined(separator: "; ") + " => \(line)")
        }
        return line
    }

    private func setTimer(milliseconds ms: Int) {
        var timer = itimerval()
        timer.it_value.tv_sec = ms / 1000
        timer.it_value.tv_usec = (ms % 1000) * 1000
        setitimer(__itimer_which_t(ITIMER_REAL.rawValue), &timer, nil)
    }
}
