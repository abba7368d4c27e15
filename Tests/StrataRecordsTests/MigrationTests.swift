import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

@Suite struct MigrationTests {
    static func v1() throws -> Model {
        try Model {
            Entity("TodoList") {
                AttributeDescription("name", .string)
                AttributeDescription("created", .int32, default: 0)
                RelationshipDescription("items", toMany: "Item", inverse: "list", deleteRule: .cascade)
                RelationshipDescription("tags", toMany: "Tag", inverse: "lists")
            }
            Entity("Item") {
                AttributeDescription("title", .string)
                AttributeDescription("amount", .decimal, default: Decimal(0))
                RelationshipDescription("list", toOne: "TodoList", inverse: "items")
            }
            Entity("Tag") {
                AttributeDescription("label", .string)
                RelationshipDescription("lists", toMany: "TodoList", inverse: "tags")
            }
        }
    }

    static func v2() throws -> Model {
        try Model {
            Entity("List", renamedFrom: "TodoList") {
                AttributeDescription("name", .string)
                AttributeDescription("created", .int64, default: 0)  // widened
                AttributeDescription("color", .string, default: "blue")  // added
                RelationshipDescription("entries", toMany: "Item", inverse: "list", deleteRule: .cascade, renamedFrom: "items")
                RelationshipDescription("tags", toMany: "Tag", inverse: "lists")
                DerivedAttributeDescription("itemCount", .int64, "entries.@count")  // backfilled
                DerivedAttributeDescription("searchName", .string, "canonical:(name)")
                FetchIndex("searchName")  // backfilled
            }
            Entity("Item") {
                AttributeDescription("label", .string, renamedFrom: "title")  // renamed; amount removed
                RelationshipDescription("list", toOne: "List", inverse: "entries")
                DerivedAttributeDescription("listName", .string, "list.name", optional: true)
            }
            Entity("Tag") {
                AttributeDescription("label", .string)
                RelationshipDescription("lists", toMany: "List", inverse: "tags")
                DerivedAttributeDescription("listCount", .int64, "lists.@count")
            }
        }
    }

    @Test func lightweightMigrationCarriesRowsOverAndBackfills() throws {
        let fs = SimulatedFileSystem()
        let store = try makeStore(try Self.v1(), fs: fs)
        let (list, item) = try store.write { tx -> (ObjectID, ObjectID) in
            let l = try tx.insert("TodoList", ["name": "Café", "created": 7])
            let i = try tx.insert("Item", ["title": "milk", "amount": Decimal(2), "list": l])
            try tx.insert("Item", ["title": "eggs", "list": l])
            let t = try tx.insert("Tag", ["label": "home"])
            try tx.add(l, to: "lists", of: t)
            return (l, i)
        }
        try store.close()
        // Without asking, a different model is refused.
        #expect(throws: StrataError.self) { _ = try makeStore(try Self.v2(), fs: fs) }
        var o = StoreOptions(durability: .normal)
        o.fileSystem = fs
        let migrated = try RecordStore(path: "/db/records.strata", model: try Self.v2(), options: o, migration: .lightweight)
        let newList = ObjectID(entity: "List", primaryKey: list.primaryKey)
        let newItem = ObjectID(entity: "Item", primaryKey: item.primaryKey)
        #expect(try migrated.value("name", of: newList) == .string("Café"))
        #expect(try migrated.value("created", of: newList) == .int(7))
        #expect(try migrated.value("color", of: newList) == .string("blue"))
        #expect(try migrated.value("itemCount", of: newList) == .int(2))
        #expect(try migrated.value("searchName", of: newList) == .string("cafe"))
        #expect(try migrated.value("label", of: newItem) == .string("milk"))
        #expect(try migrated.value("listName", of: newItem) == .string("Café"))
        let tag = try #require(try migrated.read { try $0.objects("Tag").first })
        #expect(try migrated.value("listCount", of: tag) == .int(1))
        try expectConsistent(migrated)
        // Primary keys continue where they were; the store works on.
        let next = try migrated.write { tx in try tx.insert("Item", ["label": "bread", "list": newList]) }
        #expect(next.primaryKey == 3)
        #expect(try migrated.value("itemCount", of: newList) == .int(3))
        try migrated.close()
        // Reopening with the new model needs no migration.
        let again = try RecordStore(path: "/db/records.strata", model: try Self.v2(), options: o)
        try expectConsistent(again)
    }

    @Test func aChangedTypeIsRefusedNamingTheProperty() throws {
        let fs = SimulatedFileSystem()
        let store = try makeStore(try Model { Entity("A") { AttributeDescription("x", .string) } }, fs: fs)
        try store.close()
        var o = StoreOptions(durability: .normal)
        o.fileSystem = fs
        do {
            _ = try RecordStore(path: "/db/records.strata", model: try Model { Entity("A") { AttributeDescription("x", .int64) } }, options: o, migration: .lightweight)
            Issue.record("a type change was migrated")
        } catch StrataError.modelMismatch(let differences) {
            #expect(differences.contains { $0.contains("A.x") && $0.contains("type changed") })
        }
    }
}

extension MigrationTests {
    /// A migration is not an edit: a `now()` attribute the old model had keeps the time of the
    /// row's last real change (it was stamped with the migration's time), and one the new model
    /// adds is set to the migration's time. Rows without a stamp stay without one.
    @Test func migrationKeepsNowStampsAndStampsNewOnes() throws {
        let fs = SimulatedFileSystem()
        let v1 = try Model {
            Entity("Note") {
                AttributeDescription("text", .string)
                DerivedAttributeDescription("modified", .date, "now()")
            }
        }
        let v2 = try Model {
            Entity("Note") {
                AttributeDescription("text", .string)
                AttributeDescription("pinned", .bool, default: false)
                DerivedAttributeDescription("modified", .date, "now()")
                DerivedAttributeDescription("migrated", .date, "now()")
            }
        }
        let store = try makeStore(v1, fs: fs)
        let note = try store.write { tx in try tx.insert("Note", ["text": "a"]) }
        let stamped = try store.value("modified", of: note)
        guard case .date(let before) = stamped else { Issue.record("modified is \(stamped)"); return }
        try store.close()
        // The migration's transaction begins measurably later than the insert's.
        Thread.sleep(forTimeInterval: 0.05)
        var o = StoreOptions(durability: .normal)
        o.fileSystem = fs
        let migrated = try RecordStore(path: "/db/records.strata", model: v2, options: o, migration: .lightweight)
        #expect(try migrated.value("modified", of: note) == stamped)
        guard case .date(let stampedByMigration) = try migrated.value("migrated", of: note) else {
            Issue.record("a now() attribute the migration added is not a date"); return
        }
        #expect(stampedByMigration.timeIntervalSince(before) >= 0.04)
        try expectConsistent(migrated)
        // A real change stamps again.
        try migrated.write { tx in try tx.update(note, ["text": "b"]) }
        guard case .date(let after) = try migrated.value("modified", of: note) else { Issue.record("modified lost"); return }
        #expect(after > before)
        try migrated.close()
    }
}
