import ArgumentParser
import Foundation
import StrataRecords
import StrataStorage
import StrataTesting

/// `strata-harness converge-writer --path P --store K --seed S --stop FILE` (hidden): one store's
/// writing process in `converge`. Commits random transactions to its store (shared with the
/// store's replicator) until FILE exists: items titled `sK-N` inserted into, moved between and
/// deleted from lists any store made; amounts changed and lists renamed whoever made them (two
/// stores change one property at once); tags linked and unlinked; tags made under labels from a
/// small pool every store draws from (two stores give one label at once). After each commit it
/// prints `+TITLE` for an item it inserted and `-TITLE` for one it deleted, so the parent knows
/// which items must be in every store exactly once; `done N` at the end.
struct ConvergeWriterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "converge-writer", abstract: "Worker process for converge.", shouldDisplay: false)

    @Option var path: String
    @Option var store: Int
    @Option var seed: UInt64
    @Option var stop: String
    @Option(help: "Pause between commits, in milliseconds.")
    var pause = 5
    /// Labels tags take: few enough that the stores (and the server) collide often.
    static let labels = 40

    func run() throws {
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared
        options.checkpointLogBytes = 1 << 20
        let records = try RecordStore(path: path, model: try todoModel(), options: options, history: .on)
        var rng = SplitMix64(seed: seed)
        var mine: [ObjectID] = []
        var next = 0
        var commits = 0
        while access(stop, F_OK) != 0 {
            var inserted: [String] = []
            var deleted: [String] = []
            do {
                try records.write { tx in
                    tx.author = "converge-writer-\(store)"
                    inserted = []
                    deleted = []
                    let lists = try tx.objects("TodoList")
                    let tags = try tx.objects("Tag")
                    // Items this process made and still holds (another store cannot delete them:
                    // lists are never deleted, and only their writer deletes items).
                    let live = try mine.filter { try tx.values(of: $0) != nil }
                    switch live.count < 10 ? 0 : rng.below(100) {
                    case 0..<35:
                        guard !lists.isEmpty else { return }
                        for _ in 0..<(1 + rng.below(3)) {
                            let title = "s\(store)-\(next)"
                            next += 1
                            let item = try tx.insert("Item", ["title": title, "amount": Decimal(rng.below(1000)) / 8,
                                                              "quantity": Int32(1 + rng.below(5)),
                                                              "list": lists[rng.below(lists.count)]])
                            mine.append(item)
                            inserted.append(title)
                        }
                    case 35..<50:
                        guard !lists.isEmpty else { return }
                        try tx.set("list", of: live[rng.below(live.count)], to: lists[rng.below(lists.count)])
                    case 50..<60:
                        // Any store's item: the same property changed by several at once.
                        let items = try tx.objects("Item")
                        guard !items.isEmpty else { return }
                        try tx.update(items[rng.below(items.count)], ["amount": Decimal(rng.below(500)),
                                                                     "quantity": Int32(1 + rng.below(9))])
                    case 60..<68:
                        guard !lists.isEmpty else { return }
                        try tx.update(lists[rng.below(lists.count)], ["name": "list \(rng.below(1000)) by s\(store)"])
                    case 68..<78:
                        guard !tags.isEmpty, !lists.isEmpty else { return }
                        let tag = tags[rng.below(tags.count)]
                        let list = lists[rng.below(lists.count)]
                        if try tx.members(of: "lists", of: tag).contains(list) {
                            try tx.remove(list, from: "lists", of: tag)
                        } else {
                            try tx.add(list, to: "lists", of: tag)
                        }
                    case 78..<86:
                        let label = "label \(rng.below(Self.labels))"
                        let taken = try tags.contains { try tx.values(of: $0)?["label"] == .string(label) }
                        guard !taken else { return }
                        let tag = try tx.insert("Tag", ["label": label, "score": Int64(store)])
                        if !lists.isEmpty { try tx.add(lists[rng.below(lists.count)], to: "lists", of: tag) }
                    case 86..<89:
                        guard !tags.isEmpty else { return }
                        try tx.delete(tags[rng.below(tags.count)])
                    case 89..<98:
                        let index = rng.below(live.count)
                        guard case .string(let title)? = try tx.values(of: live[index])?["title"] else { return }
                        try tx.delete(live[index])
                        deleted.append(title)
                    default:
                        _ = try tx.insert("TodoList", ["name": "s\(store) list \(next)"])
                        next += 1
                    }
                }
                commits += 1
                for title in inserted { writeLineUnbuffered("+\(title)") }
                for title in deleted { writeLineUnbuffered("-\(title)") }
            } catch StrataError.conflict {
                // A label this store's snapshot missed (a pull brought it meanwhile): not made.
                continue
            }
            if pause > 0 { usleep(UInt32(pause * 1000)) }
        }
        try records.close()
        writeLineUnbuffered("done \(commits)")
    }
}
