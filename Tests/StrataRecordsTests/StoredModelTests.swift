import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

@Suite struct StoredModelTests {
    @Test func theStoredModelRebuildsTheSameLayout() throws {
        let fs = SimulatedFileSystem()
        let model = try todoModel()
        let store = try makeStore(model, fs: fs)
        _ = try store.write { tx in try tx.insert("TodoList", ["name": "x"]) }
        try store.close()
        var o = StoreOptions()
        o.fileSystem = fs
        o.readOnly = true
        let reopened = try RecordStore(path: "/db/records.strata", options: o)
        for e in model.entities {
            let r = try #require(reopened.model.entity(e.name))
            #expect(r.fields.map(\.name) == e.fields.map(\.name))
            #expect(r.fields.map(\.type) == e.fields.map(\.type))
            #expect(r.indexes == e.indexes && r.uniquenessConstraints == e.uniquenessConstraints)
        }
        #expect(try reopened.read { try $0.count("TodoList") } == 1)
        #expect(try reopened.read { try $0.checkRecords() } == [])
    }

    @Test func openingWithAnotherModelListsTheDifferences() throws {
        let fs = SimulatedFileSystem()
        let store = try makeStore(try todoModel(), fs: fs)
        try store.close()
        let other = try Model {
            Entity("TodoList") { Attribute("name", .string); Attribute("color", .string, optional: true) }
        }
        do {
            _ = try makeStore(other, fs: fs)
            Issue.record("a different model was accepted")
        } catch StrataError.modelMismatch(let differences) {
            #expect(differences.contains { $0.contains("TodoList.color") })
            #expect(differences.contains { $0.contains("Item") })
        }
    }
}
