import ArgumentParser
import StrataStorage
import StrataTesting

/// `strata-harness crash-test-writer --path P --seed S` (hidden): the writer `crash-test --process`
/// kills. Prints each step after its commit returned (durable: `full` durability), one per line.
struct CrashTestWriterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-test-writer", abstract: "Writer process for crash-test --process.", shouldDisplay: false)

    @Option var path: String
    @Option var seed: UInt64
    @Option(help: "Stop (closing the store) after this step.")
    var maxStep = 1_000_000

    func run() throws {
        let store = try Store(path: path, options: ProcessWorkload.options())
        var step = try store.read { tx -> Int in
            guard let stored = try tx.tree(ProcessWorkload.metaTree)?.get(ProcessWorkload.metaKey),
                  stored.count == 8 else { return 0 }
            return Int(stored.littleEndian(at: 0, width: 8))
        }
        while step < maxStep {
            step += 1
            let ops = ProcessWorkload.ops(seed: seed, step: step)
            try store.write { tx in try CrashWorkload.apply(CrashWorkload.Step(ops: ops), tx) }
            writeLineUnbuffered(String(step))
            if step % 50 == 0 { try store.compact() }
        }
        try store.close()
    }
}
