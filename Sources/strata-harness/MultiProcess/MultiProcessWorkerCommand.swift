import ArgumentParser
import StrataRecords
import StrataStorage
import StrataTesting

/// `strata-harness multi-process-worker --path P (--writer W | --reader R)` (hidden): one process
/// of `multi-process`. A writer commits its steps (``MultiProcessWorkload``) from where its
/// progress tag says it stopped, printing `ack N` once step N's commit returned (durable: `full`
/// durability); writer 0 compacts every 150 steps. A reader checks, on snapshot after snapshot,
/// that the lists' derived counts add up to the items it sees and that no writer's progress
/// goes backwards, printing `read N` (N items); every 25th snapshot it runs the full record
/// check. A failed check prints `BAD …` and exits 2.
struct MultiProcessWorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "multi-process-worker", abstract: "Worker process for multi-process.", shouldDisplay: false)

    @Option var path: String
    @Option var writer: Int?
    @Option var reader: Int?
    @Option var writers = 3

    func run() throws {
        let store = try RecordStore(path: path, model: try todoModel(), options: MultiProcessWorkload.options())
        if let writer {
            try write(store, writer: writer)
        } else {
            try read(store)
        }
    }

    private func write(_ store: RecordStore, writer: Int) throws {
        let lists = try store.read { try $0.objects("TodoList") }
        var step = try store.read { try MultiProcessWorkload.progress(of: writer, in: $0).1 }
        while true {
            step += 1
            let next = step
            try store.write { tx in
                let tag = try MultiProcessWorkload.progress(of: writer, in: tx).0
                try MultiProcessWorkload.commit(step: next, writer: writer, lists: lists, tag: tag, in: tx)
            }
            writeLineUnbuffered("ack \(step)")
            if writer == 0, step % 150 == 0 { try store.storage.compact() }
        }
    }

    private func read(_ store: RecordStore) throws {
        var seen = Array(repeating: 0, count: writers)
        var rounds = 0
        while true {
            rounds += 1
            let problem = try store.read { reader -> String? in
                let items = try reader.count("Item")
                var counted: Int64 = 0
                for list in try reader.objects("TodoList") {
                    guard case .int(let count) = try reader.value("itemCount", of: list) else { return "no itemCount" }
                    counted += count
                }
                if counted != Int64(items) { return "lists count \(counted) items, the snapshot holds \(items)" }
                for writer in 0..<writers {
                    let progress = try MultiProcessWorkload.progress(of: writer, in: reader).1
                    if progress < seen[writer] { return "writer \(writer) went back from \(seen[writer]) to \(progress)" }
                    seen[writer] = progress
                }
                if rounds % 25 == 0, let first = try reader.checkRecords(limit: 3).first { return first }
                writeLineUnbuffered("read \(items)")
                return nil
            }
            if let problem {
                writeLineUnbuffered("BAD \(problem)")
                throw ExitCode(2)
            }
        }
    }
}
