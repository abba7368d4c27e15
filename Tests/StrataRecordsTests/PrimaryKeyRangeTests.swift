import Foundation
import Testing
import StrataStorage
import StrataTesting
@testable import StrataRecords

/// Primary-key ranges (FORMAT.md §12, "Primary-key ranges"): a store allocates only from its
/// range, keeps it across opens, holds other ranges' rows without allocating their keys, and
/// refuses a counter or a range entry that would hand out a key twice.
@Suite struct PrimaryKeyRangeTests {
    static let far = UInt64(1) << 62

    func expectError(_ label: String, _ matches: (StrataError) -> Bool, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("\(label): no error")
        } catch let error as StrataError {
            #expect(matches(error), "\(label): \(error)")
        } catch {
            Issue.record("\(label): \(error)")
        }
    }

    static func isCorrupt(_ e: StrataError) -> Bool { if case .corrupt = e { return true } else { return false } }
    static func isInvalid(_ e: StrataError) -> Bool { if case .invalidArgument = e { return true } else { return false } }
    static func isExhausted(_ e: StrataError) -> Bool { if case .limitExceeded = e { return true } else { return false } }

    @Test func theRangesCutTheKeySpaceBelowTwoToTheSixtyTwo() {
        #expect(PrimaryKeyRange.initial.lowerBound == 1 && PrimaryKeyRange.initial.upperBound == 1 << 40)
        let three = PrimaryKeyRange(number: 3)!
        #expect(three.lowerBound == 3 << 40 && three.upperBound == 4 << 40)
        #expect(PrimaryKeyRange.holding(3 << 40) == three && PrimaryKeyRange.holding((4 << 40) - 1) == three)
        #expect(PrimaryKeyRange.holding(0) == nil && PrimaryKeyRange.holding(Self.far) == nil)
        #expect(PrimaryKeyRange(number: PrimaryKeyRange.rangeCount) == nil)
        #expect(PrimaryKeyRange(number: PrimaryKeyRange.rangeCount - 1)!.upperBound == Self.far)
    }

    @Test func aStoreAllocatesFromTheRangeItAdoptedAcrossOpens() throws {
        let fs = SimulatedFileSystem()
        var store = try makeStore(try todoModel(), fs: fs)
        let first = try store.write { tx in try tx.insert("TodoList", ["name": "A"]) }
        #expect(first.primaryKey == 1)
        let range = PrimaryKeyRange(number: 3)!
        try store.write { tx in try tx.adoptKeyRange(range) }
        let lists = try store.write { tx in try (0..<3).map { _ in try tx.insert("TodoList", ["name": "B"]) } }
        #expect(lists.map(\.primaryKey) == [3 << 40, (3 << 40) + 1, (3 << 40) + 2])
        // Entities with no rows yet start at the range's first key as well.
        let tag = try store.write { tx in try tx.insert("Tag", ["label": "t"]) }
        #expect(tag.primaryKey == 3 << 40)
        try store.close()
        store = try makeStore(try todoModel(), fs: fs)
        #expect(try store.write { tx in try tx.keyRange() } == range)
        let item = try store.write { tx in try tx.insert("Item", ["title": "i", "list": lists[0]]) }
        let list = try store.write { tx in try tx.insert("TodoList", ["name": "C"]) }
        #expect(item.primaryKey == 3 << 40 && list.primaryKey == (3 << 40) + 3)
        // The row of range 0 keeps its key and its place.
        #expect(try store.value("name", of: first) == .string("A"))
        #expect(try store.read { try $0.checkRecords() } == [])
        // Adopting the range again changes nothing.
        try store.write { tx in try tx.adoptKeyRange(range) }
        #expect(try store.write { tx in try tx.insert("TodoList", ["name": "D"]) }.primaryKey == (3 << 40) + 4)
    }

    @Test func rowsOfOtherRangesAreHeldAndTheirKeysNeverAllocated() throws {
        let store = try makeStore(try todoModel(), fs: SimulatedFileSystem())
        try store.write { tx in try tx.adoptKeyRange(PrimaryKeyRange(number: 2)!) }
        // Rows another store (ranges 0, 5) or a server (from 2^62) made, inserted under their keys.
        let foreign: [UInt64] = [7, 5 << 40, (5 << 40) + 9, Self.far + 11, (UInt64(1) << 63) - 1]
        try store.write { tx in
            for pk in foreign { try tx.insert("TodoList", primaryKey: pk, ["name": "far \(pk)"]) }
        }
        let own = try store.write { tx in try (0..<2).map { _ in try tx.insert("TodoList", ["name": "own"]).primaryKey } }
        #expect(own == [2 << 40, (2 << 40) + 1])
        #expect(try store.read { try $0.objects("TodoList") }.map(\.primaryKey).sorted() == (foreign + own).sorted())
        #expect(try store.read { try $0.checkRecords() } == [])
        // A key of the store's own range it has not handed out, and key 0, are refused; a key
        // in use is a conflict.
        for pk: UInt64 in [(2 << 40) + 2, (3 << 40) - 1, 0] {
            expectError("insert under \(pk)", Self.isInvalid) {
                try store.write { tx in _ = try tx.insert("TodoList", primaryKey: pk, ["name": "x"]) }
            }
        }
        expectError("insert under a key in use", { if case .conflict = $0 { true } else { false } }) {
            try store.write { tx in _ = try tx.insert("TodoList", primaryKey: 5 << 40, ["name": "x"]) }
        }
        // Adopting a range the store already holds rows of starts past them.
        try store.write { tx in try tx.adoptKeyRange(PrimaryKeyRange(number: 5)!) }
        #expect(try store.write { tx in try tx.insert("TodoList", ["name": "n"]) }.primaryKey == (5 << 40) + 10)
        #expect(try store.write { tx in try tx.insert("Tag", ["label": "n"]) }.primaryKey == 5 << 40)
        #expect(try store.read { try $0.checkRecords() } == [])
    }

    @Test func aRangeRunsOutWithATypedError() throws {
        let store = try makeStore(try todoModel(), fs: SimulatedFileSystem())
        let range = PrimaryKeyRange(number: 4)!
        try store.write { tx in try tx.adoptKeyRange(range) }
        try store.storage.write { tx in
            try tx.tree("records:meta")!.put(Array("next:Tag".utf8), KeyEncoding.primaryKey(range.upperBound - 2))
        }
        #expect(try store.write { tx in try tx.insert("Tag", ["label": "last"]) }.primaryKey == range.upperBound - 2)
        expectError("an insert past the range", Self.isExhausted) {
            try store.write { tx in _ = try tx.insert("Tag", ["label": "past"]) }
        }
        let problems = try store.read { try $0.checkRecords() }
        #expect(problems.contains { $0.contains("next:Tag") && $0.contains("exhausted") }, "\(problems)")
        // A range the store already filled cannot be adopted either.
        try store.write { tx in try tx.adoptKeyRange(.initial) }
        expectError("adopting a full range", Self.isExhausted) {
            try store.write { tx in try tx.adoptKeyRange(range) }
        }
    }

    @Test func forgedRangesAndCountersAreCorruption() throws {
        let store = try makeStore(try todoModel(), fs: SimulatedFileSystem())
        try store.write { tx in try tx.adoptKeyRange(PrimaryKeyRange(number: 6)!) }
        try store.write { tx in _ = try tx.insert("TodoList", ["name": "a"]) }
        func forge(_ key: String, _ value: [UInt8]) throws {
            try store.storage.write { tx in try tx.tree("records:meta")!.put(Array(key.utf8), value) }
        }
        // A counter outside the range would hand out another store's keys.
        for counter in [UInt64(1), 7 << 40, .max] {
            try forge("next:TodoList", KeyEncoding.primaryKey(counter))
            expectError("counter \(counter)", Self.isCorrupt) {
                try store.write { tx in _ = try tx.insert("TodoList", ["name": "b"]) }
            }
            let problems = try store.read { try $0.checkRecords() }
            // Below the range the counter is also below the key in use there.
            #expect(problems.contains { $0.contains("next:TodoList") && ($0.contains("outside") || $0.contains("not above")) },
                    "\(problems)")
        }
        // One at the range's only key in use would reuse it.
        try forge("next:TodoList", KeyEncoding.primaryKey(6 << 40))
        expectError("counter at a key in use", Self.isCorrupt) {
            try store.write { tx in _ = try tx.insert("TodoList", ["name": "b"]) }
        }
        try forge("next:TodoList", KeyEncoding.primaryKey((6 << 40) + 1))
        // A range entry past the last range, or not 8 bytes.
        for entry in [KeyEncoding.primaryKey(PrimaryKeyRange.rangeCount), [0, 6]] {
            try forge("keyrange", entry)
            expectError("range entry \(entry)", Self.isCorrupt) {
                try store.write { tx in _ = try tx.insert("TodoList", ["name": "b"]) }
            }
            let problems = try store.read { try $0.checkRecords() }
            #expect(problems.contains { $0.contains("key range entry") }, "\(problems)")
        }
        try forge("keyrange", KeyEncoding.primaryKey(6))
        #expect(try store.write { tx in try tx.insert("TodoList", ["name": "b"]) }.primaryKey == (6 << 40) + 1)
        #expect(try store.read { try $0.checkRecords() } == [])
    }
}
