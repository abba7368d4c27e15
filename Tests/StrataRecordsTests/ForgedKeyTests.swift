import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// Keys read from the file are bounds-checked before their primary key is sliced out: a forged
/// short key throws `corrupt` instead of reading outside the key (release builds have no
/// bounds check on buffer slices).
@Suite struct ForgedKeyTests {
    func expectCorrupt(_ label: String, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("\(label): a forged short key was accepted")
        } catch StrataError.corrupt {
        } catch {
            Issue.record("\(label): \(error), not corrupt")
        }
    }

    @Test func shortKeysInRecordTreesAreCorruption() throws {
        let store = try makeStore(try todoModel())
        let (list, item, tag) = try store.write { tx -> (ObjectID, ObjectID, ObjectID) in
            let list = try tx.insert("TodoList", ["name": "A"])
            let item = try tx.insert("Item", ["title": "x", "amount": Decimal(3), "list": list])
            try tx.insert("Item", ["title": "y", "amount": Decimal(4), "list": list])
            let tag = try tx.insert("Tag", ["label": "t"])
            try tx.add(tag, to: "tags", of: list)
            return (list, item, tag)
        }
        func forge(_ tree: String, _ key: [UInt8], _ value: [UInt8] = []) throws {
            try store.storage.write { tx in try tx.tree(tree)!.put(key, value) }
        }
        let pk = KeyEncoding.primaryKey(list.primaryKey)
        // A join key of 3 bytes: the checker sliced bytes 8..<16 of it.
        try forge("join:TodoList:tags", [1, 2, 3])
        expectCorrupt("checkRecords over a short join key") { _ = try store.read { try $0.checkRecords() } }
        try store.storage.write { tx in _ = try tx.tree("join:TodoList:tags")!.delete([1, 2, 3]) }
        // An inverse key with the list's prefix but no room for the row's key.
        try forge("inverse:Item:list", pk + [9])
        expectCorrupt("members over a short inverse key") { _ = try store.read { try $0.members(of: "items", of: list) } }
        try store.storage.write { tx in _ = try tx.tree("inverse:Item:list")!.delete(pk + [9]) }
        // An extremes key of the list shorter than parent + value + child: the next seek for
        // the minimum lands on it.
        try forge("extremes:TodoList:cheapest", pk + [0])
        expectCorrupt("@min over a short extremes key") { try store.write { tx in try tx.delete(item) } }
        try store.storage.write { tx in _ = try tx.tree("extremes:TodoList:cheapest")!.delete(pk + [0]) }
        // A uniqueness owner and a primary-key counter of the wrong length.
        try forge("unique:Tag:label", { var k: [UInt8] = []; KeyEncoding.append(.string("t"), to: &k); return k }(), [1, 2])
        expectCorrupt("a uniqueness owner of 2 bytes") { try store.write { tx in try tx.update(tag, ["label": "u"]) } }
        try forge("records:meta", Array("next:Tag".utf8), [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        expectCorrupt("an exhausted primary-key counter") { _ = try store.write { tx in try tx.insert("Tag", ["label": "v"]) } }
        try forge("rows:Tag", [7])
        expectCorrupt("a rows key of 1 byte") { _ = try store.read { try $0.objects("Tag") } }
    }

    /// A key counter at or below a key in use, or record trees whose meta tree is gone, would
    /// make the next insert overwrite a row: both are corruption (found by `strata-harness fuzz`).
    @Test func countersThatWouldReuseAKeyAreCorruption() throws {
        let fs = SimulatedFileSystem()
        let store = try makeStore(try todoModel(), fs: fs)
        let first = try store.write { tx -> ObjectID in
            let list = try tx.insert("TodoList", ["name": "A"])
            try tx.insert("TodoList", ["name": "B"])
            return list
        }
        for counter: UInt64 in [1, 2] {
            try store.storage.write { tx in try tx.tree("records:meta")!.put(Array("next:TodoList".utf8), KeyEncoding.primaryKey(counter)) }
            expectCorrupt("next:TodoList = \(counter)") { _ = try store.write { tx in try tx.insert("TodoList", ["name": "C"]) } }
        }
        // A missing counter with rows present is the same damage.
        try store.storage.write { tx in _ = try tx.tree("records:meta")!.delete(Array("next:TodoList".utf8)) }
        expectCorrupt("no next:TodoList") { _ = try store.write { tx in try tx.insert("TodoList", ["name": "C"]) } }
        try store.storage.write { tx in try tx.tree("records:meta")!.put(Array("next:TodoList".utf8), KeyEncoding.primaryKey(3)) }
        #expect(try store.value("name", of: first) == .string("A"))
        let third = try store.write { tx in try tx.insert("TodoList", ["name": "C"]) }
        #expect(third.primaryKey == 3)
        try store.storage.write { tx in try tx.dropTree("records:meta") }
        try store.close()
        expectCorrupt("record trees without records:meta") { _ = try makeStore(try todoModel(), fs: fs) }
    }
}
