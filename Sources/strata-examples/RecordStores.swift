import ArgumentParser
import Foundation
import StrataRecords

/// The record layer's migration plan and word index, as StrataRecords' getting-started article
/// shows them (the article's code is these functions' lines).
struct RecordStores: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "records",
        abstract: "A record store migrated by a plan (a changed type), and searched through a word index."
    )

    func run() throws {
        begin("records: a migration plan with a custom stage, and a word index")
        // The article's stores are named relative to the current directory.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-records-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let previous = FileManager.default.currentDirectoryPath
        guard FileManager.default.changeCurrentDirectoryPath(directory.path) else {
            throw ExampleFailure(description: "cannot enter \(directory.path)")
        }
        defer {
            _ = FileManager.default.changeCurrentDirectoryPath(previous)
            try? FileManager.default.removeItem(at: directory)
        }
        say("version 1 stores ages as text; version 2 as integers, converted by a custom stage")
        try show("age after the migration", try migrateAges(), expected: StoredValue.int(41))
        let (hits, found) = try searchNotes()
        say("\"CAFE tree*\": every word, folded as canonical: folds; tree* a prefix")
        try show("notes found by the search", hits, expected: 1)
        try show("notes found by CONTAINSANYWORD in a fetch", found, expected: 2)
    }

    /// The migration example: the age read back from the migrated store.
    func migrateAges() throws -> StoredValue {
        let v1 = try Model(version: 1) { Entity("Person") { AttributeDescription("age", .string) } }
        let v2 = try Model(version: 2) {
            Entity("Person") {
                AttributeDescription("age", .int64)                      // a changed type: a custom stage
                FetchIndex("age")
            }
        }
        let old = try RecordStore(path: "census.strata", model: v1)
        let ann = try old.write { tx in try tx.insert("Person", ["age": "41"]) }
        try old.close()
        let plan = try MigrationPlan(stages: [
            .custom(from: v1, to: v2) { old, new in                      // reads v1's rows, writes v2's
                for id in try old.objects("Person") {
                    guard case .string(let text) = try old.value("age", of: id) else { continue }
                    try new.update(id, ["age": Int64(text) ?? 0])        // indexes and derived values: rebuilt after
                }
            },
        ])
        let people = try RecordStore(path: "census.strata", model: v2, migration: .plan(plan))  // all or nothing
        let age = try people.read { try $0.value("age", of: ann) }
        print(age)                                                       // 41; opened by v1 now: .unsupportedModelVersion
        try people.close()
        return age
    }

    /// The word-index example: how many notes the search and the fetch found.
    func searchNotes() throws -> (search: Int, fetch: Int) {
        let notes = try RecordStore(path: "notes.strata", model: try Model {
            Entity("Note") {
                AttributeDescription("title", .string)
                AttributeDescription("body", .string, optional: true)
                FullTextIndex("title", "body")                           // kept word by word at commit
            }
        })
        try notes.write { tx in
            try tx.insert("Note", ["title": "Café trees", "body": "Pages, logs and trees."])
            try tx.insert("Note", ["title": "Storage engines"])
        }
        let hits = try notes.read { try $0.search(TextSearch("Note", matching: "CAFE tree*")) }  // every word; tree*: a prefix
        print(hits.map(\.id))                                            // [Note/1], best first
        let storage = FetchRequest("Note", predicate: try FetchPredicate(        // words as a condition, through the index
            format: "{title, body} CONTAINSANYWORD %@ AND title != %@", "stor* logs", "Drafts"))
        let found = try notes.read { try $0.fetch(storage) }
        print(found)                                                     // [Note/1, Note/2]
        try notes.close()
        return (hits.count, found.count)
    }
}
