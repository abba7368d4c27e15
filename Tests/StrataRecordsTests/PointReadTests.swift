import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// A snapshot reads stored rows through one cursor per entity kept between reads (decision 49):
/// whatever the order of the reads (ascending runs, random, keys that name no row, two entities
/// interleaved) each finds exactly its own row, as a fresh snapshot does; a write transaction
/// sees its own changes.
@Suite struct PointReadTests {
    @Test(arguments: [UInt64(31), 32])
    func storedRowsInAnyOrderAreTheirOwn(seed: UInt64) throws {
        let store = try makeStore(try todoModel())
        var rng = SplitMix64(seed: seed)
        let lists = try store.write { tx in try (0..<300).map { i in try tx.insert("TodoList", ["name": "list \(i)"]) } }
        let items = try store.write { tx in
            try (0..<2_000).map { i in
                try tx.insert("Item", ["title": "item \(i) " + String(repeating: "x", count: Int(rng.next() % 40)),
                                       "amount": Decimal(i), "list": lists[i % lists.count]])
            }
        }
        // The rows as a snapshot of their own reads them, one at a time.
        let expected = try store.read { r in try (lists + items).map { try r.storedRow(of: $0) } }
        let all = lists + items
        var order: [Int] = []
        for _ in 0..<200 {
            switch rng.next() % 3 {
            case 0:  // an ascending run of one entity
                let start = Int(rng.next() % UInt64(all.count))
                order.append(contentsOf: (start..<min(all.count, start + Int(rng.next() % 50))))
            case 1: order.append(Int(rng.next() % UInt64(all.count)))
            default: order.append(-1 - Int(rng.next() % 3))  // a key that names no row
            }
        }
        try store.read { (r) throws in
            for (n, i) in order.enumerated() {
                if i < 0 {
                    let missing = [ObjectID(entity: "Item", primaryKey: 0), ObjectID(entity: "Item", primaryKey: 1 << 40),
                                   ObjectID(entity: "TodoList", primaryKey: UInt64(lists.count + 1) + (1 << 20))][-1 - i]
                    #expect(try r.storedRow(of: missing) == nil, "seed \(seed) read \(n)")
                } else {
                    #expect(try r.storedRow(of: all[i]) == expected[i], "seed \(seed) read \(n): \(all[i])")
                }
            }
        }
        // A write transaction reads its own change, then the row it did not change.
        try store.write { (tx) throws in
            try tx.update(items[5], ["title": "changed"])
            #expect(try tx.storedRow(of: items[5]) != expected[lists.count + 5])
            #expect(try tx.storedRow(of: items[6]) == expected[lists.count + 6])
        }
        try expectConsistent(store)
    }
}
