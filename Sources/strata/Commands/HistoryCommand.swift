import ArgumentParser
import Foundation
import StrataRecords
import StrataStorage

/// `strata history FILE [--since TOKEN] [--limit N] [--json]`: the store's persistent history,
/// one transaction after another (FORMAT.md §12, "History").
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print a store's persistent history (the transactions after a token).",
        discussion: """
            Opens the store read-only (no lock). Text: one line per transaction (token, commit \
            time, author, storage transaction), then one line per change. --json: one JSON \
            object per line and transaction. A token whose successors were purged fails with \
            the purge mark: read the data afresh and continue from the newest token.
            """)

    @Argument(help: "The store file.")
    var file: String

    @Option(help: "Print the transactions after this token (default: from the oldest kept).")
    var since: UInt64?

    @Option(help: "Print at most this many transactions.")
    var limit: Int?

    @Flag(help: "Print JSON lines instead of text.")
    var json = false

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more") }
    }

    func run() throws {
        let store = try openStore(file, readOnly: true)
        defer { try? store.close() }
        guard let records = try RecordsReport.open(store) else { throw ToolError("\(file) holds no record model") }
        // Without --since, start after the purge mark: what is kept, not an error for what is not.
        let start = try since.map(HistoryToken.init) ?? records.read { try $0.earliestHistoryToken() }
        let out = OutputBuffer()
        defer { out.flush() }
        var after = start
        var left = limit ?? .max
        while left > 0 {
            let page = try records.history(after: after, limit: min(left, 512))
            guard let last = page.last else { break }
            for transaction in page { out.write(json ? Self.jsonLine(transaction) : Self.text(transaction)) }
            after = last.token
            left -= page.count
        }
    }

    static func text(_ transaction: HistoryTransaction) -> String {
        var out = "token \(transaction.token)  \(ISO8601DateFormatter().string(from: transaction.date))"
        if let author = transaction.author { out += "  author \(RecordsReport.json(author))" }
        out += "  transaction \(transaction.transactionID)  \(transaction.changes.count) "
            + (transaction.changes.count == 1 ? "change\n" : "changes\n")
        for change in transaction.changes {
            let object = "\(change.id.entity)/\(change.id.primaryKey)"
            switch change.kind {
            case .link, .unlink:
                let other = change.other.map { "\($0.entity)/\($0.primaryKey)" } ?? "?"
                out += "  \(change.kind) \(object).\(change.relationship ?? "?") \(other)\n"
            case .insert, .update, .delete:
                var parts = change.values.keys.sorted().map { name in
                    "\(name)=\(RecordsReport.json(change.values[name]!))"
                        + (change.derivedNames.contains(name) ? " (derived)" : "")
                }
                parts += change.toOneTargets.keys.sorted().map { name in
                    let target = change.toOneTargets[name]!
                    return "\(name)=" + (target.map { "\($0.entity)/\($0.primaryKey)" } ?? "null")
                }
                out += "  \(change.kind) \(object)" + (parts.isEmpty ? "" : " " + parts.joined(separator: " ")) + "\n"
            }
        }
        return out
    }

    /// `{"token":…,"transaction":…,"date":…,"author":…,"changes":[…]}` on one line.
    static func jsonLine(_ transaction: HistoryTransaction) -> String {
        let changes = transaction.changes.map { change -> String in
            // The kind's case name is its word in the output: insert, update, delete, link, unlink.
            var fields = ["\"kind\":\"\(change.kind)\"", "\"entity\":\(RecordsReport.json(change.id.entity))",
                          "\"id\":\(change.id.primaryKey)"]
            switch change.kind {
            case .link, .unlink:
                fields.append("\"relationship\":\(RecordsReport.json(change.relationship ?? ""))")
                if let other = change.other {
                    let entity = RecordsReport.json(other.entity)
                    fields.append("\"other\":{\"entity\":\(entity),\"id\":\(other.primaryKey)}")
                }
            case .insert, .update, .delete:
                let values = change.values.keys.sorted().map { name in
                    "\(RecordsReport.json(name)):\(RecordsReport.json(change.values[name]!))"
                }
                fields.append("\"values\":{\(values.joined(separator: ","))}")
                let derived = change.derivedNames.sorted().map(RecordsReport.json)
                fields.append("\"derived\":[\(derived.joined(separator: ","))]")
                let targets = change.toOneTargets.keys.sorted().map { name -> String in
                    let target = change.toOneTargets[name]!.map {
                        "{\"entity\":\(RecordsReport.json($0.entity)),\"id\":\($0.primaryKey)}"
                    } ?? "null"
                    return "\(RecordsReport.json(name)):\(target)"
                }
                fields.append("\"toOne\":{\(targets.joined(separator: ","))}")
            }
            return "{" + fields.joined(separator: ",") + "}"
        }
        let date = RecordsReport.json(ISO8601DateFormatter().string(from: transaction.date))
        let author = transaction.author.map(RecordsReport.json) ?? "null"
        return "{\"token\":\(transaction.token),\"transaction\":\(transaction.transactionID),\"date\":\(date),"
            + "\"author\":\(author),\"changes\":[\(changes.joined(separator: ","))]}\n"
    }
}
