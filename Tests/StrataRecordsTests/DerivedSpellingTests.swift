import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// A string rewritten into a canonically equivalent spelling (NFC "é" to NFD "e" + U+0301) is
/// equal by Swift's `==` but is other bytes: another index key, another answer to a prefix
/// search by scalars. The derivation engine compared with `==`, so a derived copy, a
/// `lowercase:` and a string `@max` kept the old spelling, and the `@max` bookkeeping kept the
/// old key (found by the record checker, which compares derived values byte for byte).
@Suite struct DerivedSpellingTests {
    static let nfc = "Caf\u{E9}", nfd = "Cafe\u{301}"

    static func bytes(_ v: StoredValue) -> [UInt8]? { v.stringValue.map { Array($0.utf8) } }

    @Test func rowLocalDerivedValuesFollowTheSpelling() throws {
        let store = try makeStore(try todoModel())
        let (list, item) = try store.write { tx -> (ObjectID, ObjectID) in
            let list = try tx.insert("TodoList", ["name": Self.nfc])
            return (list, try tx.insert("Item", ["title": Self.nfc, "list": list]))
        }
        try store.write { tx in
            try tx.update(item, ["title": Self.nfd])
            try tx.update(list, ["name": Self.nfd])
        }
        #expect(Self.bytes(try store.value("lowerTitle", of: item)) == Array("cafe\u{301}".utf8))
        // A copy through the to-one fans out to the item when the list's name changes spelling.
        #expect(Self.bytes(try store.value("listName", of: item)) == Array(Self.nfd.utf8))
        #expect(Self.bytes(try store.value("loudName", of: list)) == Array("CAFE\u{301}".utf8))
        try expectConsistent(store)
    }

    static func extremesModel() throws -> Model {
        try Model {
            Entity("Box") {
                RelationshipDescription("things", toMany: "Thing", inverse: "box")
                RelationshipDescription("labels", toMany: "Label", inverse: "boxes")
                DerivedAttributeDescription("lastThing", .string, "things.name.@max", optional: true)
                DerivedAttributeDescription("firstLabel", .string, "labels.text.@min", optional: true)
            }
            Entity("Thing") {
                AttributeDescription("name", .string)
                RelationshipDescription("box", toOne: "Box", inverse: "things")
            }
            Entity("Label") {
                AttributeDescription("text", .string)
                RelationshipDescription("boxes", toMany: "Box", inverse: "labels")
            }
        }
    }

    @Test func stringExtremesFollowTheSpelling() throws {
        let store = try makeStore(try Self.extremesModel())
        let (box, thing, label) = try store.write { tx -> (ObjectID, ObjectID, ObjectID) in
            let box = try tx.insert("Box")
            let thing = try tx.insert("Thing", ["name": Self.nfc, "box": box])
            let label = try tx.insert("Label", ["text": Self.nfc])
            try tx.add(label, to: "labels", of: box)
            return (box, thing, label)
        }
        try store.write { tx in
            try tx.update(thing, ["name": Self.nfd])
            try tx.update(label, ["text": Self.nfd])
        }
        #expect(Self.bytes(try store.value("lastThing", of: box)) == Array(Self.nfd.utf8))
        #expect(Self.bytes(try store.value("firstLabel", of: box)) == Array(Self.nfd.utf8))
        // The bookkeeping holds the new spelling's key: removing the value empties the extreme.
        var nfdKey = KeyEncoding.primaryKey(box.primaryKey)
        KeyEncoding.append(.string(Self.nfd), to: &nfdKey)
        nfdKey += KeyEncoding.primaryKey(thing.primaryKey)
        #expect(try store.storage.read { try $0.tree("extremes:Box:lastThing")?.get(nfdKey) } != nil)
        try store.write { tx in try tx.delete(thing) }
        #expect(try store.value("lastThing", of: box) == .null)
        try expectConsistent(store)
    }
}
