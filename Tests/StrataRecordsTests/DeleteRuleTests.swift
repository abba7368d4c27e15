import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

@Suite struct DeleteRuleTests {
    static func model() throws -> Model {
        try Model {
            Entity("Folder") {
                AttributeDescription("name", .string)
                RelationshipDescription("notes", toMany: "Note", inverse: "folder", deleteRule: .cascade)
                RelationshipDescription("owner", toOne: "User", inverse: "folders")
            }
            Entity("Note") {
                AttributeDescription("text", .string)
                RelationshipDescription("folder", toOne: "Folder", inverse: "notes")
                RelationshipDescription("comments", toMany: "Comment", inverse: "note", deleteRule: .cascade)
                RelationshipDescription("labels", toMany: "Label", inverse: "notes")
            }
            Entity("Comment") {
                AttributeDescription("text", .string)
                RelationshipDescription("note", toOne: "Note", inverse: "comments")
            }
            Entity("User") {
                AttributeDescription("name", .string)
                RelationshipDescription("folders", toMany: "Folder", inverse: "owner", deleteRule: .deny)
            }
            Entity("Label") {
                AttributeDescription("name", .string)
                RelationshipDescription("notes", toMany: "Note", inverse: "labels")
                DerivedAttributeDescription("noteCount", .int64, "notes.@count")
            }
        }
    }

    @Test func cascadeRunsThroughChainsAndNullifyUnlinks() throws {
        let store = try makeStore(try Self.model())
        let (folder, label) = try store.write { tx -> (ObjectID, ObjectID) in
            let f = try tx.insert("Folder", ["name": "f"])
            let l = try tx.insert("Label", ["name": "l"])
            for n in 0..<3 {
                let note = try tx.insert("Note", ["text": "n\(n)", "folder": f])
                try tx.add(l, to: "labels", of: note)
                for c in 0..<2 { try tx.insert("Comment", ["text": "c\(c)", "note": note]) }
            }
            return (f, l)
        }
        #expect(try store.value("noteCount", of: label) == .int(3))
        try store.write { tx in try tx.delete(folder) }
        #expect(try store.read { try $0.count("Note") } == 0)
        #expect(try store.read { try $0.count("Comment") } == 0)
        #expect(try store.read { try $0.members(of: "notes", of: label) }.isEmpty)
        #expect(try store.value("noteCount", of: label) == .int(0))
        try expectConsistent(store)
    }

    /// Found by the SQLite differential test: deleting both ends of a many-to-many link in one
    /// transaction left the link in the join trees (each side skipped the other as gone).
    @Test func deletingBothEndsOfALinkRemovesTheLink() throws {
        let store = try makeStore(try Self.model())
        let (folder, note, label) = try store.write { tx -> (ObjectID, ObjectID, ObjectID) in
            let folder = try tx.insert("Folder", ["name": "f"])
            let note = try tx.insert("Note", ["text": "n", "folder": folder])
            let label = try tx.insert("Label", ["name": "l"])
            try tx.add(label, to: "labels", of: note)
            return (folder, note, label)
        }
        // The note goes by cascade from its folder, the label directly, in either order.
        try store.write { tx in
            try tx.delete(label)
            try tx.delete(folder)
        }
        #expect(try store.read { try $0.exists(note) } == false)
        try expectConsistent(store)
        let (n2, l2) = try store.write { tx -> (ObjectID, ObjectID) in
            let n = try tx.insert("Note", ["text": "m"])
            let l = try tx.insert("Label", ["name": "k"])
            try tx.add(n, to: "notes", of: l)
            return (n, l)
        }
        try store.write { tx in
            try tx.delete(n2)
            try tx.delete(l2)
        }
        try expectConsistent(store)
    }

    @Test func denyNamesWhatBlocksUnlessItGoesToo() throws {
        let store = try makeStore(try Self.model())
        let (user, folder) = try store.write { tx -> (ObjectID, ObjectID) in
            let u = try tx.insert("User", ["name": "ann"])
            let f = try tx.insert("Folder", ["name": "f", "owner": u])
            return (u, f)
        }
        do {
            try store.write { tx in try tx.delete(user) }
            Issue.record("deny did not block")
        } catch StrataError.conflict(let entity, let properties, let reason) {
            #expect(entity == "User" && properties == ["folders"])
            #expect(reason.contains("1 Folder"))
        }
        #expect(try store.read { try $0.exists(user) })
        // Deleting what blocks in the same transaction lets the delete through.
        try store.write { tx in
            try tx.delete(user)
            try tx.delete(folder)
        }
        #expect(try store.read { try $0.count("User") } == 0)
        try expectConsistent(store)
    }

    @Test func nowIsNotBumpedByDerivationAndOverflowIsAnError() throws {
        let model = try Model {
            Entity("List") {
                AttributeDescription("name", .string)
                RelationshipDescription("items", toMany: "Item", inverse: "list")
                DerivedAttributeDescription("count", .int64, "items.@count")
                DerivedAttributeDescription("total", .int64, "items.n.@sum")
                DerivedAttributeDescription("modified", .date, "now()")
            }
            Entity("Item") {
                AttributeDescription("n", .int64)
                RelationshipDescription("list", toOne: "List", inverse: "items")
            }
        }
        let store = try makeStore(model)
        let list = try store.write { tx in try tx.insert("List", ["name": "a"]) }
        let before = try store.value("modified", of: list)
        _ = try store.write { tx in try tx.insert("Item", ["n": Int64.max, "list": list]) }
        #expect(try store.value("modified", of: list) == before)
        #expect(try store.value("count", of: list) == .int(1))
        do {
            _ = try store.write { tx in try tx.insert("Item", ["n": 1, "list": list]) }
            Issue.record("an overflowing sum committed")
        } catch StrataError.validation(let entity, let property, _) {
            #expect(entity == "List" && property == "total")
        }
        #expect(try store.value("count", of: list) == .int(1))
        try store.write { tx in try tx.update(list, ["name": "b"]) }
        #expect(try store.value("modified", of: list) != before)
        try expectConsistent(store)
    }
}
