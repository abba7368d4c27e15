import Foundation
import Testing
@testable import StrataRecords
@testable import StrataStorage

/// Two record stores on one file shared between processes (two handles: their `flock`s exclude
/// each other as two processes' do): keys, derived values and history tokens stay right when
/// their transactions interleave, because each transaction starts from the other's commits.
@Suite struct SharedRecordStoreTests {
    static func open(_ path: String) throws -> RecordStore {
        var options = StoreOptions(durability: .normal)
        options.sharing = .shared(lockTimeout: .seconds(5))
        options.checkpointLogBytes = 8 << 10
        return try RecordStore(path: path, model: try todoModel(), options: options, history: .on)
    }

    @Test(arguments: [UInt64(20261127), 99])
    func interleavedTransactionsKeepKeysDerivedValuesAndHistoryRight(seed: UInt64) throws {
        let dir = NSTemporaryDirectory() + "strata-shared-records-\(getpid())-\(seed)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/todo.strata"
        let stores = [try Self.open(path), try Self.open(path)]
        let lists = try stores[0].write { tx in try (0..<4).map { try tx.insert("TodoList", ["name": "List \($0)"]) } }
        var rng = SplitMix64(seed: seed)
        var items: [ObjectID] = []
        var expectedCount = Array(repeating: 0, count: lists.count)
        var membership: [ObjectID: Int] = [:]
        // Transactions that changed something (a move to the list an item is in changes nothing).
        var changing = 1
        for step in 0..<300 {
            let store = stores[rng.below(2)]
            let roll = rng.below(10)
            if roll < 6 || items.isEmpty {
                let list = rng.below(lists.count)
                let item = try store.write { tx in
                    let item = try tx.insert("Item", ["title": "Item \(step)", "amount": step % 13])
                    try tx.set("list", of: item, to: lists[list])
                    return item
                }
                #expect(!items.contains(item), "seed \(seed): key \(item) handed out twice")
                items.append(item)
                changing += 1
                membership[item] = list
                expectedCount[list] += 1
            } else if roll < 9 {
                let item = items[rng.below(items.count)]
                let list = rng.below(lists.count)
                try store.write { tx in try tx.set("list", of: item, to: lists[list]) }
                if membership[item] != list { changing += 1 }
                expectedCount[membership[item]!] -= 1
                expectedCount[list] += 1
                membership[item] = list
            } else {
                let index = rng.below(items.count)
                let item = items.remove(at: index)
                try store.write { tx in try tx.delete(item) }
                changing += 1
                expectedCount[membership.removeValue(forKey: item)!] -= 1
            }
        }
        for store in stores {
            let counts = try store.read { reader in
                try lists.map { list -> Int in
                    guard case .int(let count) = try reader.value("itemCount", of: list) else { return -1 }
                    return Int(count)
                }
            }
            #expect(counts == expectedCount, "seed \(seed)")
            #expect(try store.read { try $0.checkRecords() } == [], "seed \(seed)")
        }
        // One history, its tokens consecutive, whichever handle committed.
        let history = try stores[1].history()
        #expect(history.map(\.token.value) == Array(1...UInt64(history.count)), "seed \(seed)")
        #expect(history.count == changing, "seed \(seed)")
        for store in stores { try store.close() }
        let reopened = try RecordStore(path: path, model: try todoModel())
        defer { try? reopened.close() }
        #expect(try reopened.read { try $0.checkRecords() } == [])
        #expect(try reopened.storage.check().isClean)
    }
}
