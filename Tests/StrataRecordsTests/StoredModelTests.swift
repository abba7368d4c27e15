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
            Entity("TodoList") { AttributeDescription("name", .string); AttributeDescription("color", .string, optional: true) }
        }
        do {
            _ = try makeStore(other, fs: fs)
            Issue.record("a different model was accepted")
        } catch StrataError.modelMismatch(let differences) {
            #expect(differences.contains { $0.contains("TodoList.color") })
            #expect(differences.contains { $0.contains("Item") })
        }
    }

    /// Rebuilt rules print the signatures they were read from, whatever ", " their patterns and
    /// names hold, unless a pattern holds ", " and a whole signature.
    @Test func validationClausesReadBack() throws {
        let clauses: [(String, [String])] = [
            ("min 0.0, max 10.0", ["min 0.0", "max 10.0"]),
            ("minLength 1, maxLength 20, pattern [A-Z]{3}-[0-9]+", ["minLength 1", "maxLength 20", "pattern [A-Z]{3}-[0-9]+"]),
            ("pattern a, b, custom noSeven", ["pattern a, b", "custom noSeven"]),
            ("pattern ab, min x|c, max 1e+20", ["pattern ab, min x|c", "max 1e+20"]),
            ("custom odd, or even, pattern , min -0.0", ["custom odd, or even", "pattern ", "min -0.0"]),
            ("min nan, max inf, pattern x, maxi", ["min nan", "max inf", "pattern x, maxi"]),
            ("custom ", ["custom "]),
        ]
        for (clause, signatures) in clauses {
            let rules = try #require(ValidationRule.rules(signatures: Substring(clause)), "\(clause)")
            #expect(rules.map(\.signature) == signatures, "\(clause)")
        }
        for bad in ["", "minimum 3", "min x", "max", "minLength 1.5, max 2"] {
            #expect(ValidationRule.rules(signatures: Substring(bad)) == nil, "\(bad)")
        }
        // A custom rule comes back by name and accepts everything: its code is the program's.
        let custom = try #require(ValidationRule.rules(signatures: "custom noSeven")?.first)
        #expect(custom.violation(.int(7)) == nil)
        #expect(RandomModel.customRule("noSeven").violation(.int(7)) != nil)
    }

    /// The one ambiguity of the text: a pattern holding ", min 3" reads back as a pattern and
    /// a minimum. The store is still sound, and the check says so; the difference is a note.
    @Test func anAmbiguousPatternIsANoteNotAProblem() throws {
        let fs = SimulatedFileSystem()
        let model = try Model {
            Entity("Code") { AttributeDescription("text", .string, validation: [.pattern("[a-z]+, min 3")]) }
        }
        let store = try makeStore(model, fs: fs)
        try store.write { tx in _ = try tx.insert("Code", ["text": "abc, min 3"]) }
        #expect(throws: StrataError.self) { try store.write { tx in _ = try tx.insert("Code", ["text": "abc"]) } }
        try store.close()
        var o = StoreOptions()
        o.fileSystem = fs
        o.readOnly = true
        let tool = try RecordStore(path: "/db/records.strata", options: o)
        defer { try? tool.close() }
        #expect(tool.model.storedSchemaLines == model.schemaLines)
        #expect(tool.model.schemaLinesReadDifferently == [
            "stored: Code.text: attribute string validate pattern [a-z]+, min 3",
            "reads back as: Code.text: attribute string validate pattern [a-z]+, min 3.0",
        ], "\(tool.model.schemaLinesReadDifferently)")
        #expect(try tool.read { try $0.checkRecords() } == [])
        #expect(model.schemaLinesReadDifferently.isEmpty, "a declared model has no stored text")
    }

    /// A line break in a pattern, a custom rule's name or a derived expression went into the
    /// schema text as written, so the program's own store failed to open again (its text read
    /// as other lines: `modelMismatch`). The model refuses them now.
    @Test func lineBreaksInRulesAndExpressionsAreRefused() throws {
        let cases: [(String, Entity)] = [
            ("a", Entity("E") { AttributeDescription("a", .string, validation: [.pattern("a\nb|x")]) }),
            ("a", Entity("E") { AttributeDescription("a", .string, validation: [.maximumLength(3), .custom(name: "two\r\nlines") { _ in nil }]) }),
            ("d", Entity("E") { AttributeDescription("n", .int64); DerivedAttributeDescription("d", .int64, "n +\n 1") }),
        ]
        for (property, entity) in cases {
            let error = #expect(throws: StrataError.self) { _ = try Model(entities: [entity]) }
            guard case .invalidModel("E", property?, let reason)? = error else {
                Issue.record("\(property): \(String(describing: error))")
                continue
            }
            #expect(reason.contains("line break"), "\(reason)")
        }
        // A pattern can still match a line break, escaped.
        _ = try Model { Entity("E") { AttributeDescription("a", .string, validation: [.pattern("a\\nb")]) } }
    }
}
