import ArgumentParser
import Dispatch
import Foundation
import StrataPostgres
import StrataRecords
import StrataStorage
import Synchronization

/// `strata replicate FILE --to postgres://USER@HOST[:PORT]/DATABASE [--follow] [--name NAME]`:
/// pushes the store's commits to PostgreSQL (decision 62), once or continuously; `--from URL`
/// first makes FILE as a new store of the dataset there (decision 110).
struct ReplicateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replicate",
        abstract: "Replicate a store's commits to a PostgreSQL database (and, with --pull, back).",
        discussion: """
            The store's model becomes tables (one per entity, a column per attribute, derived \
            ones included, foreign keys for to-ones, join tables for many-to-many), and the \
            transactions of its persistent history are applied in commit order, each whole \
            within one PostgreSQL transaction (up to --batch consecutive ones together), with \
            the last applied token, so a replication stopped at any point resumes exactly once. \
            With --pull, rows a server application changes in PostgreSQL come back first (a \
            change table filled by triggers; --follow wakes on its NOTIFY): the store's value \
            wins a property changed on both sides since the last exchange, a deletion wins \
            over changes, derived values are the store's. The first run copies the store. \
            Several stores can share one dataset, each under its own --name with a range of \
            primary keys of its own: --from URL makes FILE as a new store of the dataset there \
            (with its model, or --model's schema text) and copies the dataset's rows into it; \
            a store holding rows of its own cannot join a dataset other stores write to. The \
            store is opened read-only (read-write with --pull); another process may write it \
            meanwhile. The password comes from the URL, PGPASSWORD or ~/.pgpass (PGPASSFILE), \
            and is never printed. TLS: ?sslmode=require or ?sslmode=verify-full&sslrootcert=FILE.
            """)

    @Argument(help: "The store file (it must record persistent history).")
    var file: String

    @Option(help: "The database: postgres://USER@HOST[:PORT]/DATABASE[?sslmode=MODE].")
    var to: String?

    @Option(help: ArgumentHelp(
        "Make FILE (it must not exist) as a new store of the dataset in this database, then replicate as with --to.",
        discussion: "The store is made with the dataset's model (or --model), joins the dataset with a range of "
            + "primary keys of its own and takes a copy of its rows; the program then opens it with its own model."))
    var from: String?

    @Option(help: ArgumentHelp("With --from: a file holding the model's schema text (FORMAT.md §12), "
                               + "for a database nothing replicates to yet.", valueName: "file"))
    var model: String?

    @Flag(help: "Keep replicating each new commit until interrupted.")
    var follow = false

    @Option(help: "The replication's name in the database's strata_replication table.")
    var name = "default"

    @Option(help: "At most this many store transactions in one PostgreSQL transaction (1: one each).")
    var batch = 1_000

    @Flag(help: "Also take the rows a server application changed in PostgreSQL into the store (the store wins a property changed on both sides; a deletion wins).")
    var pull = false

    @Flag(help: "Push what is left, then take the store out of its dataset: its name and range of keys are retired and the changes queued for it dropped (its rows stay). With no FILE there (its machine gone), only retires the name.")
    var leave = false

    @Flag(help: "Print each report as a JSON line instead of text.")
    var json = false

    func validate() throws {
        guard batch >= 1 else { throw ValidationError("--batch must be at least 1") }
        guard (to == nil) != (from == nil) else { throw ValidationError("give the database with --to or with --from") }
        guard model == nil || from != nil else { throw ValidationError("--model goes with --from") }
        guard !leave || (to != nil && !follow && !pull) else {
            throw ValidationError("--leave goes with --to, without --follow or --pull")
        }
    }

    func run() throws {
        let destination = try PostgresDestination(url: to ?? from ?? "")
        if leave && access(file, F_OK) != 0 {
            // The store is gone (its machine lost): its name is retired all the same.
            let dropped = Mutex(0)
            let name = self.name
            try waitFor {
                let count = try await PostgresReplicator.retire(name, at: destination)
                dropped.withLock { $0 = count }
            }
            let count = dropped.withLock { $0 }
            print(json ? "{\"kind\":\"leave\",\"dropped\":\(count)}"
                  : "retired '\(name)' from the dataset without its store (\(file) is not here, so nothing was pushed), "
                    + "\(count) queued change\(count == 1 ? "" : "s") dropped")
            return
        }
        if from != nil { try makeStore(joining: destination) }
        guard access(file, F_OK) == 0 else { throw ToolError("no such file: \(file)") }
        var options = StoreOptions()
        // Shared, read-only unless pulling or joining: the handle follows whoever writes the store.
        options.readOnly = !pull && from == nil
        options.sharing = .shared
        options.cacheBytes = 64 << 20
        let storage = try Store(path: file, options: options)
        defer { try? storage.close() }
        let store = try RecordStore(opening: storage)
        let replicator = PostgresReplicator(store: store, destination: destination, name: name,
                                            transactionsPerBatch: batch)
        let follow = self.follow
        let pull = self.pull
        let json = self.json
        // Each report is flushed as it is printed: whoever reads a pipe or a file sees a push
        // when it ends, not when a buffer fills.
        let report: @Sendable (PushReport) -> Void = { report in
            print(json ? Self.jsonLine(report) : Self.line(report, destination))
            fflush(nil)  // nil: every output stream (stdout itself is not concurrency-safe to name)
        }
        let reportPull: @Sendable (PullReport) -> Void = { pulled in
            guard pulled.changes > 0 else { return }
            print(json ? Self.jsonLine(pulled) : Self.line(pulled))
            fflush(nil)
        }
        let leave = self.leave
        let name = self.name
        try waitFor {
            if leave {
                let (pushed, dropped) = try await replicator.leave()
                report(pushed)
                print(json ? "{\"kind\":\"leave\",\"dropped\":\(dropped)}"
                      : "left the dataset as '\(name)': its range of keys is retired, \(dropped) queued "
                        + "change\(dropped == 1 ? "" : "s") dropped")
                fflush(nil)
            } else if follow {
                try await replicator.follow(pulling: pull, stop: { pushed in
                    if pushed.transactions > 0 || pushed.copiedAll { report(pushed) }
                    return false
                }, pulled: reportPull)
            } else if pull {
                let (pulled, pushed) = try await replicator.exchange()
                reportPull(pulled)
                report(pushed)
            } else {
                report(try await replicator.push())
            }
        }
    }

    /// `--from`: makes `file` as an empty store of the dataset's model (or `--model`'s), with
    /// history recorded; the first push then joins the dataset and copies its rows.
    private func makeStore(joining destination: PostgresDestination) throws {
        guard access(file, F_OK) != 0 else {
            throw ToolError("\(file) exists: --from makes a new store (--to replicates an existing one)")
        }
        let taken = Mutex(false)
        let name = self.name
        try waitFor {
            let registered = try await PostgresReplicator.isRegistered(name, at: destination)
            taken.withLock { $0 = registered }
        }
        if taken.withLock({ $0 }) {
            throw ToolError("the dataset has a store named '\(name)' already: give this one a name of its own with "
                            + "--name (and the same --name whenever it is replicated)")
        }
        let text: String
        if let model {
            guard let read = try? String(contentsOfFile: model, encoding: .utf8) else {
                throw ToolError("cannot read the model's schema text from \(model)")
            }
            text = read
        } else {
            let found = Mutex<String?>(nil)
            try waitFor {
                let stored = try await PostgresReplicator.datasetModelText(at: destination)
                found.withLock { $0 = stored }
            }
            guard let stored = found.withLock({ $0 }) else {
                throw ToolError("nothing replicates to \(destination) yet, so it holds no model: give --model FILE")
            }
            text = stored
        }
        let made = try RecordStore(path: file, model: try Model.reading(schemaText: text), history: .on)
        try made.close()
    }

    static func line(_ report: PushReport, _ destination: PostgresDestination) -> String {
        if report.joinedDataset && report.transactions == 0 {
            // The rows came from PostgreSQL: nothing of the store went the other way.
            return "joined the dataset at \(destination): copied its \(report.rows) row\(report.rows == 1 ? "" : "s") "
                + "into the store in \(String(format: "%.2f", report.seconds)) s; token \(report.token)"
        }
        var text = report.joinedDataset ? "joined the dataset and copied its rows, then "
            : report.copiedAll ? "copied the store, then " : ""
        text += "replicated \(report.transactions) transaction\(report.transactions == 1 ? "" : "s") "
            + "(\(report.changes) change\(report.changes == 1 ? "" : "s"), \(report.rows) row\(report.rows == 1 ? "" : "s") "
            + "in \(report.batches) PostgreSQL transaction\(report.batches == 1 ? "" : "s")) "
            + "to \(destination) in \(String(format: "%.2f", report.seconds)) s"
        if report.rows > 0 { text += ", \(Int(report.rowsPerSecond)) rows/s" }
        if let lag = report.lagSeconds { text += ", lag \(String(format: "%.3f", lag)) s" }
        if report.retries > 0 {
            text += ", \(report.retries) batch\(report.retries == 1 ? "" : "es") retried after a deadlock or serialization failure"
        }
        return text + "; token \(report.token)"
    }
}

extension ReplicateCommand {
    static func line(_ report: PullReport) -> String {
        "pulled \(report.changes) change\(report.changes == 1 ? "" : "s") (\(report.rowsApplied) applied, "
            + "\(report.rowsKeyed) inserted rows given store keys, \(report.conflicts) conflicts kept the store's value, "
            + "\(report.deletionsWon) deletions won) in \(String(format: "%.2f", report.seconds)) s"
            + (report.token.map { "; token \($0)" } ?? "")
            + report.conflictDetails.map { "\nconflict \($0)" }.joined()
            + report.refusals.map { "\nrefused \($0)" }.joined()
    }

    static func jsonLine(_ report: PullReport) -> String {
        var fields = ["\"kind\":\"pull\"", "\"changes\":\(report.changes)", "\"rowsApplied\":\(report.rowsApplied)",
                      "\"rowsKeyed\":\(report.rowsKeyed)", "\"conflicts\":\(report.conflicts)",
                      "\"deletionsWon\":\(report.deletionsWon)", "\"refusals\":\(report.refusals.count)",
                      "\"seconds\":\(report.seconds)"]
        if let token = report.token { fields.append("\"token\":\(token.value)") }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// A push as one JSON object (the figures only: no URL, so no host or user either).
    static func jsonLine(_ report: PushReport) -> String {
        var fields = ["\"kind\":\"push\"", "\"copiedAll\":\(report.copiedAll)", "\"joinedDataset\":\(report.joinedDataset)",
                      "\"transactions\":\(report.transactions)",
                      "\"changes\":\(report.changes)", "\"rows\":\(report.rows)", "\"batches\":\(report.batches)",
                      "\"retries\":\(report.retries)", "\"seconds\":\(report.seconds)", "\"token\":\(report.token.value)"]
        if let lag = report.lagSeconds { fields.append("\"lagSeconds\":\(lag)") }
        return "{" + fields.joined(separator: ",") + "}"
    }
}

/// Runs `body` on a task and blocks this (non-async) command's thread until it ends.
func waitFor(_ body: @escaping @Sendable () async throws -> Void) throws {
    let outcome = Mutex<(any Error)??>(nil)
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do {
            try await body()
            outcome.withLock { $0 = .some(nil) }
        } catch {
            outcome.withLock { $0 = .some(error) }
        }
        done.signal()
    }
    done.wait()
    if let error = outcome.withLock({ $0 }) ?? nil { throw error }
}
