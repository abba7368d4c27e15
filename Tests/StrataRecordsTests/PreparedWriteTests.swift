import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// Prepared writes (decision 40): inserts and updates from arrays of values in a prepared
/// order give exactly the rows, indexes and derived values of the same writes through the
/// dictionary API, and every misuse is an error that changes nothing.
@Suite struct PreparedWriteTests {
    /// The same random inserts and updates, through dictionaries on one store and prepared
    /// writes on another: the stores end with the same rows (the `now()` attribute aside) and
    /// both check clean.
    @Test func preparedWritesMatchTheDictionaryAPI() throws {
        let seed: UInt64 = 20261126
        let byName = try makeStore(try todoModel())
        let prepared = try makeStore(try todoModel())
        let newList = try prepared.prepareWrite("TodoList", properties: ["name", "budget"])
        let newItem = try prepared.prepareWrite("Item", properties: ["title", "amount", "quantity", "weight", "list"])
        let move = try prepared.prepareWrite("Item", properties: ["list", "amount"])
        let rename = try prepared.prepareWrite("TodoList", properties: ["name"])
        #expect(newItem.properties == ["title", "amount", "quantity", "weight", "list"] && newItem.entity == "Item")
        var rng = SplitMix64(seed: seed)
        var lists: [ObjectID] = []
        var items: [ObjectID] = []
        for round in 0..<40 {
            // Both stores take the same decisions: draw them once.
            var ops: [(kind: Int, a: Int, b: Int, c: Int)] = []
            for _ in 0..<25 { ops.append((Int(rng.next() % 4), Int(rng.next() % 1_000), Int(rng.next() % 1_000), Int(rng.next() % 7))) }
            let (l1, i1) = try byName.write { tx -> ([ObjectID], [ObjectID]) in
                var (ls, its) = (lists, items)
                for op in ops {
                    switch op.kind {
                    case 0:
                        ls.append(try tx.insert("TodoList", ["name": "list \(op.a)", "budget": Decimal(op.b)]))
                    case 1 where !ls.isEmpty:
                        let weight: (any ValueConvertible)? = op.c == 0 ? nil : Double(op.c) / 4
                        var values: [String: any ValueConvertible] = ["title": "item \(op.a)", "amount": Decimal(op.b) / 100, "quantity": op.c + 1,
                                                                      "list": ls[op.a % ls.count]]
                        if let weight { values["weight"] = weight }
                        its.append(try tx.insert("Item", values))
                    case 2 where !its.isEmpty && !ls.isEmpty:
                        try tx.update(its[op.a % its.count], ["list": ls[op.b % ls.count], "amount": Decimal(op.c)])
                    case 3 where !ls.isEmpty:
                        try tx.update(ls[op.a % ls.count], ["name": "renamed \(op.b)"])
                    default:
                        break
                    }
                }
                return (ls, its)
            }
            let (l2, i2) = try prepared.write { tx -> ([ObjectID], [ObjectID]) in
                var (ls, its) = (lists, items)
                for op in ops {
                    switch op.kind {
                    case 0:
                        ls.append(try tx.insert(newList, [.string("list \(op.a)"), .decimal(Decimal(op.b))]))
                    case 1 where !ls.isEmpty:
                        let weight: StoredValue = op.c == 0 ? .null : .double(Double(op.c) / 4)
                        its.append(try tx.insert(newItem, [.string("item \(op.a)"), .decimal(Decimal(op.b) / 100), .int(Int64(op.c + 1)), weight,
                                                           ls[op.a % ls.count].strataValue]))
                    case 2 where !its.isEmpty && !ls.isEmpty:
                        try tx.update(its[op.a % its.count], move, [ls[op.b % ls.count].strataValue, .decimal(Decimal(op.c))])
                    case 3 where !ls.isEmpty:
                        try tx.update(ls[op.a % ls.count], rename, [.string("renamed \(op.b)")])
                    default:
                        break
                    }
                }
                return (ls, its)
            }
            #expect(l1 == l2 && i1 == i2, "seed \(seed), round \(round): the stores handed out other identifiers")
            (lists, items) = (l1, i1)
        }
        let model = try todoModel()
        for entity in ["TodoList", "Item"] {
            let e = try #require(model.entity(entity))
            let skipped = e.fieldIndex["modified"]
            let a = try byName.read { r in try r.objects(entity).map { try r.row(RowKey(entity: e.index, pk: $0.primaryKey)) } }
            let b = try prepared.read { r in try r.objects(entity).map { try r.row(RowKey(entity: e.index, pk: $0.primaryKey)) } }
            #expect(a.count == b.count && a.count > 10, "seed \(seed): \(entity) \(a.count) vs \(b.count)")
            for (x, y) in zip(a, b) {
                var (x, y) = (try #require(x), try #require(y))
                if let skipped { x[skipped] = .null; y[skipped] = .null }
                #expect(x == y, "seed \(seed): \(entity) rows differ")
            }
        }
        try expectConsistent(byName, "seed \(seed), dictionaries:")
        try expectConsistent(prepared, "seed \(seed), prepared:")
    }

    private func message(_ body: () throws -> Void) -> String {
        do { try body() } catch { return "\(error)" }
        return "no error"
    }

    /// What cannot be prepared: the error names the entity and the property.
    @Test func preparingRejectsWhatCannotBeSet() throws {
        let store = try makeStore(try todoModel())
        let cases: [(String, [String], String)] = [
            ("Nope", ["name"], "no entity 'Nope'"),
            ("TodoList", ["nmae"], "no such property"),
            ("TodoList", ["itemCount"], "derived attribute"),
            ("TodoList", ["items"], "to-many relationship"),
            ("TodoList", ["name", "budget", "name"], "named twice"),
        ]
        for (entity, properties, expected) in cases {
            let m = message { _ = try store.prepareWrite(entity, properties: properties) }
            #expect(m.contains(expected), "\(entity) \(properties): \(m)")
        }
        // No properties: an insert of defaults (the required title then set by another).
        let empty = try store.prepareWrite("Item", properties: [])
        let title = try store.prepareWrite("Item", properties: ["title"])
        let id = try store.write { tx in
            let id = try tx.insert(empty, [])
            try tx.update(id, title, [.string("t")])
            return id
        }
        #expect(try store.value("amount", of: id) == .decimal(0) && store.value("quantity", of: id) == .int(1))
    }

    /// Every misuse of a prepared write throws and leaves the store as it was; the transaction
    /// goes on.
    @Test func misusesThrowAndChangeNothing() throws {
        let store = try makeStore(try todoModel())
        let other = try makeStore(try todoModel())
        let newItem = try store.prepareWrite("Item", properties: ["title", "quantity", "list"])
        let foreign = try other.prepareWrite("Item", properties: ["title"])
        let rename = try store.prepareWrite("TodoList", properties: ["name"])
        let (list, item) = try store.write { tx in
            let l = try tx.insert("TodoList", ["name": "l"])
            return (l, try tx.insert("Item", ["title": "i", "list": l]))
        }
        let lv = list.strataValue
        let cases: [(String, (RecordTransaction) throws -> Void, String)] = [
            ("too few values", { _ = try $0.insert(newItem, [.string("a"), .int(1)]) }, "2 values for the prepared write's 3 properties"),
            ("too many values", { _ = try $0.insert(newItem, [.string("a"), .int(1), lv, .null]) }, "4 values"),
            ("a string for an integer", { _ = try $0.insert(newItem, [.string("a"), .string("1"), lv]) }, "quantity"),
            ("out of int32's range", { _ = try $0.insert(newItem, [.string("a"), .int(1 << 40), lv]) }, "quantity"),
            ("an integer for a string", { _ = try $0.insert(newItem, [.int(3), .int(1), lv]) }, "title"),
            ("a string for a to-one", { _ = try $0.insert(newItem, [.string("a"), .int(1), .string("l")]) }, "to-one relationship takes"),
            ("a key of 0", { _ = try $0.insert(newItem, [.string("a"), .int(1), .int(0)]) }, "to-one relationship takes"),
            ("a negative key", { _ = try $0.insert(newItem, [.string("a"), .int(1), .int(-5)]) }, "to-one relationship takes"),
            ("a missing target", { _ = try $0.insert(newItem, [.string("a"), .int(1), .int(99)]) }, "no TodoList with primary key 99"),
            ("another store's write", { _ = try $0.insert(foreign, [.string("a")]) }, "another store's model"),
            ("an update of another entity", { try $0.update(list, newItem, [.string("a"), .int(1), lv]) }, "sets Item objects, not TodoList"),
            ("an update of no object", { try $0.update(ObjectID(entity: "TodoList", primaryKey: 77), rename, [.string("x")]) }, "no TodoList with primary key 77"),
            ("an update with a bad value", { try $0.update(item, newItem, [.string("a"), .double(1.5), lv]) }, "quantity"),
        ]
        let before = try store.read { r in (try r.objects("Item"), try r.value("title", of: item), try r.value("quantity", of: item)) }
        try store.write { tx in
            for (label, body, expected) in cases {
                let m = message { try body(tx) }
                #expect(m.contains(expected), "\(label): \(m)")
            }
            // The transaction goes on after the errors.
            try tx.update(list, rename, [.string("still writable")])
        }
        let after = try store.read { r in (try r.objects("Item"), try r.value("title", of: item), try r.value("quantity", of: item)) }
        #expect(after.0 == before.0 && after.1 == before.1 && after.2 == before.2)
        #expect(try store.value("name", of: list) == .string("still writable"))
        try expectConsistent(store)
        // A transaction that ended refuses it.
        var kept: RecordTransaction?
        try store.write { kept = $0 }
        #expect(throws: StrataError.self) { _ = try kept?.insert(newItem, [.string("a"), .int(1), lv]) }
    }
}
