import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// Cost without timing: the engine's own counters show that changing a list of 100,000 items
/// touches as many rows, and about as many pages, as changing a list of 10.
@Suite struct CommitCostTests {
    @Test func derivedValuesCostTheChangeNotTheRelationship() throws {
        let store = try makeStore(try todoModel())
        let (small, big, spare) = try store.write { tx -> (ObjectID, ObjectID, ObjectID) in
            (try tx.insert("TodoList", ["name": "small"]), try tx.insert("TodoList", ["name": "big"]), try tx.insert("TodoList", ["name": "spare"]))
        }
        var smallItems: [ObjectID] = [], bigItems: [ObjectID] = []
        try store.write { tx in for i in 0..<10 { smallItems.append(try tx.insert("Item", ["title": "s\(i)", "amount": Decimal(i), "list": small])) } }
        for batch in 0..<10 {
            try store.write { tx in
                for i in 0..<10_000 { bigItems.append(try tx.insert("Item", ["title": "b\(batch)-\(i)", "amount": Decimal(i % 100), "list": big])) }
            }
        }
        #expect(try store.value("itemCount", of: big) == .int(100_000))
        typealias Stats = RecordStore.CommitStatistics
        func measure(_ list: ObjectID, _ items: [ObjectID]) throws -> [String: Stats] {
            var out: [String: Stats] = [:]
            _ = try store.write { tx in try tx.insert("Item", ["title": "new", "amount": Decimal(5), "list": list]) }
            out["insert"] = store.lastCommitStatistics
            try store.write { tx in try tx.update(items[3], ["amount": Decimal(77)]) }
            out["update"] = store.lastCommitStatistics
            try store.write { tx in try tx.set("list", of: items[4], to: spare) }
            out["move out"] = store.lastCommitStatistics
            try store.write { tx in try tx.set("list", of: items[4], to: list) }
            out["move in"] = store.lastCommitStatistics
            try store.write { tx in try tx.delete(items[5]) }
            out["delete"] = store.lastCommitStatistics
            return out
        }
        let s = try measure(small, smallItems)
        let b = try measure(big, bigItems)
        for op in s.keys.sorted() {
            let x = s[op]!, y = b[op]!
            print("[cost] \(op): 10 items: rows read \(x.rowsRead), written \(x.rowsWritten), pages \(x.pagesTouched); 100,000 items: rows read \(y.rowsRead), written \(y.rowsWritten), pages \(y.pagesTouched)")
            #expect(y.rowsRead == x.rowsRead, "\(op)")
            #expect(y.rowsWritten == x.rowsWritten, "\(op)")
            // Deeper trees under the big list cost a page or two more per tree touched.
            #expect(y.pagesTouched <= x.pagesTouched + 12, "\(op): \(x.pagesTouched) vs \(y.pagesTouched)")
            #expect(y.rowsRead <= 8 && y.rowsWritten <= 8, "\(op)")
        }
        #expect(try store.value("itemCount", of: big) == .int(100_000))
        #expect(try store.value("itemCount", of: small) == .int(10))
    }
}
