import Foundation
import StrataRecords
import StrataStorage

/// Seeded record-layer transactions over ``todoModel()``: inserts, renames (which fan out to
/// derived copies), moves between lists, deletes that cascade, many-to-many links made and
/// broken, amounts and weights changed. `strata-harness crash-test` crashes them;
/// `strata-harness fuzz` builds its record seed store from them.
package enum RecordsWorkload {
    /// Transaction `transaction` of the workload for `seed`: a pure function of both and of the store's
    /// content, so a rerun on the same content makes the same primary keys and the same states.
    package static func step(_ tx: RecordTransaction, seed: UInt64, transaction: Int) throws {
        var rng = SplitMix64(seed: mixSeed(seed, UInt64(transaction), 0x5245_4353))
        let names = ["Home", "Café", "STRASSE", "Ørsted", "work", "Groceries"]
        let lists = try tx.objects("TodoList"), items = try tx.objects("Item"), tags = try tx.objects("Tag")
        for op in 0..<rng.int(1...6) {
            switch rng.below(10) {
            case 0 where lists.count < 8, 1 where lists.isEmpty:
                try tx.insert("TodoList", ["name": names[rng.below(names.count)] + " \(transaction)"])
            case 2 where !lists.isEmpty:
                let list = lists[rng.below(lists.count)]
                if try tx.exists(list) { try tx.update(list, ["name": names[rng.below(names.count)]]) }
            case 3 where lists.count > 2 && rng.below(3) == 0:
                let list = lists[rng.below(lists.count)]
                if try tx.exists(list) { try tx.delete(list) }
            case 4 where !tags.isEmpty && !lists.isEmpty:
                let tag = tags[rng.below(tags.count)], list = lists[rng.below(lists.count)]
                if try tx.exists(tag), try tx.exists(list) {
                    if rng.below(3) == 0 {
                        try tx.remove(list, from: "lists", of: tag)
                    } else {
                        try tx.add(list, to: "lists", of: tag)
                    }
                }
            case 5 where tags.count < 4:
                try tx.insert("Tag", ["label": "tag \(transaction).\(op)"])
            case 6 where !items.isEmpty:
                let item = items[rng.below(items.count)]
                if try tx.exists(item) {
                    try tx.update(item, ["amount": Decimal(rng.below(10_000)) / 100, "weight": rng.unit() * 10])
                }
            case 7 where !items.isEmpty && !lists.isEmpty:
                let item = items[rng.below(items.count)], list = lists[rng.below(lists.count)]
                if try tx.exists(item), try tx.exists(list) {
                    try tx.set("list", of: item, to: rng.below(5) == 0 ? nil : list)
                }
            case 8 where !items.isEmpty:
                let item = items[rng.below(items.count)]
                if try tx.exists(item) { try tx.delete(item) }
            default:
                guard !lists.isEmpty else { continue }
                let list = lists[rng.below(lists.count)]
                if try tx.exists(list) {
                    try tx.insert("Item", ["title": "Item \(rng.below(100))",
                                           "amount": Decimal(rng.below(10_000)) / 100,
                                           "quantity": rng.int(1...5), "weight": rng.unit() * 10, "list": list])
                }
            }
        }
    }

    /// Every object's stored values (derived ones included, `now()`'s `modified` left out: it
    /// differs between two runs of the same transactions) and to-one targets, one line each.
    package static func digest(_ reader: RecordReader) throws -> [String] {
        var out: [String] = []
        for entity in reader.model.entities {
            for id in try reader.objects(entity.name) {
                let values = try reader.values(of: id) ?? [:]
                var parts = values.sorted { $0.key < $1.key }.filter { $0.key != "modified" }
                    .map { "\($0.key)=\($0.value)" }
                for rel in entity.relationships where !rel.isToMany {
                    parts.append("\(rel.name)->\(try reader.target(of: rel.name, of: id)?.primaryKey ?? 0)")
                }
                out.append("\(id) " + parts.joined(separator: " "))
            }
        }
        return out
    }
}

extension RecordsWorkload {
    /// The objects the fuzzers' seed store holds at least (``seedImage(seed:transactions:minimumObjects:)``):
    /// enough that damage lands among many rows and entries.
    package static let seedObjects = 60

    /// The record fuzzers' seed store: `transactions` steps of the workload on ``todoModel()``
    /// (lists, items, tags, many-to-many links, every derived form, the indexes and the unique
    /// constraint all populated, and the persistent history of every transaction), then more
    /// steps while it holds fewer than `minimumObjects` objects (some seeds delete much), as an
    /// image.
    package static func seedImage(seed: UInt64, transactions: Int = 150, minimumObjects: Int = 0) throws -> RecordsImage {
        let store = try makeStore(try todoModel(), history: .on)
        var transaction = 0
        func objects() throws -> Int {
            try store.read { r in try r.model.entities.reduce(0) { $0 + (try r.count($1.name)) } }
        }
        while try transaction < transactions || objects() < minimumObjects {
            try store.write { try step($0, seed: seed, transaction: transaction) }
            transaction += 1
        }
        let image = try RecordsImage.read(from: store.storage)
        try store.close()
        return image
    }
}
