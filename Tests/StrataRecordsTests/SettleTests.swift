import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// Reads inside a write transaction see derived values and delete rules settled, as the commit
/// would store them (decision 17), at a cost that follows what changed since the last read.
@Suite struct SettleTests {
    @Test func readsInsideTheTransactionSeeSettledDerivedValues() throws {
        let store = try makeStore(try todoModel())
        try store.write { tx in
            let list = try tx.insert("TodoList", ["name": "Café"])
            let item = try tx.insert("Item", ["title": "Milk", "amount": Decimal(2), "quantity": 3, "list": list])
            #expect(try tx.value("itemCount", of: list) == .int(1))
            #expect(try tx.value("total", of: list) == .decimal(2))
            #expect(try tx.value("lineSum", of: list) == .decimal(6))
            #expect(try tx.value("searchName", of: list) == .string("cafe"))
            #expect(try tx.values(of: item)?["listName"] == .string("Café"))
            #expect(try tx.value("listSearch", of: item) == .string("cafe"))
            try tx.update(list, ["name": "Tea"])
            try tx.insert("Item", ["title": "Jam", "amount": Decimal(5), "list": list])
            #expect(try tx.value("listName", of: item) == .string("Tea"))
            #expect(try tx.value("itemCount", of: list) == .int(2))
            #expect(try tx.value("dearest", of: list) == .decimal(5))
            // Fetches whose predicate or sort reads a derived attribute (an index of one too).
            #expect(try tx.fetch(FetchRequest("TodoList", predicate: try FetchPredicate(format: "itemCount == 2"))) == [list])
            #expect(try tx.fetch(FetchRequest("TodoList", predicate: try FetchPredicate(format: "searchName == 'tea'"))) == [list])
            #expect(try tx.fetchCount(FetchRequest("Item", predicate: try FetchPredicate(format: "listName == 'Tea'"))) == 2)
            #expect(try tx.checkRecords().isEmpty)
        }
        try expectConsistent(store)
    }

    @Test func deleteRulesSettleBeforeReadsAndDenyWaitsForTheCommit() throws {
        let store = try makeStore(try todoModel())
        let (list, item) = try store.write { tx -> (ObjectID, ObjectID) in
            let list = try tx.insert("TodoList", ["name": "A"])
            return (list, try tx.insert("Item", ["title": "x", "list": list]))
        }
        try store.write { tx in
            let tag = try tx.insert("Tag", ["label": "t"])
            try tx.add(tag, to: "tags", of: list)
            #expect(try tx.value("listCount", of: tag) == .int(1))
            try tx.delete(list)
            #expect(try tx.exists(item) == false)        // cascaded
            #expect(try tx.count("Item") == 0)
            #expect(try tx.value("listCount", of: tag) == .int(0))
            #expect(try tx.members(of: "lists", of: tag).isEmpty)
        }
        try expectConsistent(store)
    }

    /// Settling on every read costs the change since the last read, not the relationship:
    /// each read after one insert examines a bounded number of changed rows, and a read after
    /// no change does no work at all (counted by the engine, not timed).
    @Test func aReadAfterEachInsertSettlesIncrementally() throws {
        let store = try makeStore(try todoModel())
        let list = try store.write { tx in try tx.insert("TodoList", ["name": "big"]) }
        var perSettle: [Int] = []
        try store.write { tx in
            for i in 0..<2_000 {
                try tx.insert("Item", ["title": "i\(i)", "amount": Decimal(i), "list": list])
                let (settles, examined) = (tx.settles, tx.rowsExamined)
                #expect(try tx.value("itemCount", of: list) == .int(Int64(i + 1)))
                #expect(tx.settles == settles + 1)
                perSettle.append(tx.rowsExamined - examined)
                // Nothing changed: no settle, nothing examined.
                _ = try tx.value("total", of: list)
                _ = try tx.fetchCount(FetchRequest("TodoList", predicate: try FetchPredicate(format: "itemCount > 0")))
                #expect(tx.settles == settles + 1 && tx.rowsExamined == examined + perSettle.last!)
            }
        }
        print("[settle] rows examined per read after one insert: min \(perSettle.min()!), max \(perSettle.max()!)")
        #expect(perSettle.max()! == perSettle.min()!, "the work of a settle grew with the list: \(perSettle.prefix(5)) … \(perSettle.suffix(5))")
        #expect(perSettle.max()! <= 40)
        #expect(try store.value("itemCount", of: list) == .int(2_000))
        try expectConsistent(store)
    }

    /// `now()` is the transaction's start time, one value per commit; a row changed and
    /// changed back inside the transaction keeps its stamp, whether or not it was read between.
    @Test func nowIsTheTransactionsTimeAndSettlingDoesNotMoveIt() throws {
        let store = try makeStore(try todoModel())
        let list = try store.write { tx in try tx.insert("TodoList", ["name": "A"]) }
        let stamp = try store.value("modified", of: list)
        let before = Date()
        try store.write { tx in
            try tx.update(list, ["name": "B"])
            guard case .date(let d) = try tx.value("modified", of: list) else { Issue.record("no stamp"); return }
            #expect(d == tx.timestamp && d >= before)
            try tx.update(list, ["name": "A"])
            #expect(try tx.value("modified", of: list) == stamp)
        }
        #expect(try store.value("modified", of: list) == stamp)
        try expectConsistent(store)
    }

    /// A settle that fails (an overflow) leaves derived values half moved: the transaction
    /// refuses everything after it and does not commit.
    @Test func aFailedSettleEndsTheTransaction() throws {
        let model = try Model {
            Entity("List") {
                RelationshipDescription("items", toMany: "Item", inverse: "list")
                DerivedAttributeDescription("total", .int64, "items.n.@sum")
            }
            Entity("Item") {
                AttributeDescription("n", .int64)
                RelationshipDescription("list", toOne: "List", inverse: "items")
            }
        }
        let store = try makeStore(model)
        let list = try store.write { tx in try tx.insert("List") }
        var kept: RecordTransaction?
        do {
            try store.write { tx in
                kept = tx
                try tx.insert("Item", ["n": Int64.max, "list": list])
                try tx.insert("Item", ["n": 1, "list": list])
                do {
                    _ = try tx.value("total", of: list)
                    Issue.record("an overflowing sum was read")
                } catch StrataError.validation(let entity, let property, _) {
                    #expect(entity == "List" && property == "total")
                }
                #expect(throws: StrataError.self) { try tx.insert("Item", ["n": 1]) }
                #expect(throws: StrataError.self) { try tx.value("total", of: list) }
            }
            Issue.record("the transaction committed")
        } catch StrataError.validation(let entity, let property, _) {
            #expect(entity == "List" && property == "total")
        }
        #expect(throws: StrataError.self) { try kept?.count("Item") }
        #expect(try store.read { try $0.count("Item") } == 0)
        try expectConsistent(store)
    }
}
