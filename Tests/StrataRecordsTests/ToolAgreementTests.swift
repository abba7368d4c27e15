import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// The tool and the library agree: a store checked with the program's model and a store opened
/// as `strata check` opens it (the model rebuilt from the stored schema text) give the same
/// answer.
@Suite struct ToolAgreementTests {
    /// The model of the report decision 41 answers, in record-layer terms. Its validation rules
    /// used to vanish from the model the tool rebuilt, so `strata check` called every store of
    /// it damaged ("the stored schema is not the model's").
    static func projectModel() throws -> Model {
        try Model {
            Entity("Project") {
                AttributeDescription("name", .string)
                RelationshipDescription("tasks", toMany: "Task", inverse: "project", deleteRule: .deny)
                DerivedAttributeDescription("taskCount", .int64, "tasks.@count")
                DerivedAttributeDescription("estimateSum", .decimal, "tasks.estimate.@sum")
                Unique("name")
            }
            Entity("Task") {
                AttributeDescription("title", .string, validation: [.maximumLength(20)])
                AttributeDescription("priority", .int16, default: 0, validation: [.minimum(0), .maximum(10)])
                AttributeDescription("estimate", .decimal, default: Decimal(0))
                AttributeDescription("code", .string, optional: true, validation: [.pattern("[A-Z]{3}-[0-9]+")])
                RelationshipDescription("project", toOne: "Project", inverse: "tasks")
                DerivedAttributeDescription("projectName", .string, "project.name", optional: true)
            }
        }
    }

    @Test func aStoreWithValidationRulesChecksCleanAsTheToolOpensIt() throws {
        let fs = SimulatedFileSystem()
        let model = try Self.projectModel()
        let store = try makeStore(model, fs: fs)
        let (a, b) = try store.write { tx -> (ObjectID, ObjectID) in
            let a = try tx.insert("Project", ["name": "Alpha"])
            let b = try tx.insert("Project", ["name": "Beta"])
            try tx.insert("Task", ["title": "write", "priority": 3, "estimate": Decimal(string: "1.5")!, "code": "ABC-1", "project": a])
            try tx.insert("Task", ["title": "test", "estimate": Decimal(2), "project": a])
            try tx.insert("Task", ["title": "ship", "priority": 10, "code": "XYZ-42", "project": b])
            return (a, b)
        }
        // The two unique names swapped in one transaction: judged at commit, so allowed.
        try store.write { tx in
            try tx.update(a, ["name": "Beta"])
            try tx.update(b, ["name": "Alpha"])
        }
        // Refused inputs leave nothing behind.
        let refused: [(String, (RecordTransaction) throws -> Void)] = [
            ("a title over 20 characters", { tx in _ = try tx.insert("Task", ["title": String(repeating: "x", count: 21), "project": a]) }),
            ("priority 11", { tx in _ = try tx.insert("Task", ["title": "t", "priority": 11]) }),
            ("priority -1", { tx in _ = try tx.insert("Task", ["title": "t", "priority": -1]) }),
            ("a code off the pattern", { tx in _ = try tx.insert("Task", ["title": "t", "code": "abc-1"]) }),
            ("a second project named Alpha", { tx in _ = try tx.insert("Project", ["name": "Alpha"]) }),
            ("deleting a project that has tasks (deny)", { tx in try tx.delete(a) }),
        ]
        for (what, body) in refused {
            #expect(throws: StrataError.self, "\(what) was accepted") { try store.write(body) }
        }
        #expect(try store.read { try $0.checkRecords() } == [], "with the program's model")
        try store.close()

        var o = StoreOptions()
        o.fileSystem = fs
        o.readOnly = true
        let tool = try RecordStore(path: "/db/records.strata", options: o)
        defer { try? tool.close() }
        #expect(tool.model.schemaLines == model.schemaLines, "the rebuilt model prints other lines")
        #expect(try tool.read { try $0.checkRecords() } == [], "as the tool opens the store")
        #expect(try tool.read { try $0.count("Task") } == 3)
    }

    /// The class of that defect: for random models (every attribute type, rule kind, constraint,
    /// relationship kind and delete rule, derived form) and random writes (refused ones included),
    /// the store checks clean with the program's model and as the tool opens it, and both read the
    /// same objects. `STRATA_SEED=N` reruns one model; `STRATA_MODELS=N` runs N models (40 by
    /// default), `STRATA_TRANSACTIONS=N` N transactions on each (40).
    @Test func randomModelsCheckTheSameBothWays() throws {
        let seeds: [UInt64] = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init).map { [$0] }
            ?? (0..<(ProcessInfo.processInfo.environment["STRATA_MODELS"].flatMap(Int.init) ?? 40)).map { mixSeed(0x70_0150_A6EE, UInt64($0)) }
        let transactions = ProcessInfo.processInfo.environment["STRATA_TRANSACTIONS"].flatMap(Int.init) ?? 40
        var total = RandomModelWorkload.Outcome()
        var text: [String] = []
        for seed in seeds {
            let label = "seed \(seed) (rerun with STRATA_SEED=\(seed))"
            var model: Model?
            var step = "building the model"
            do {
                let m = try RandomModel.make(seed: seed)
                model = m
                let fs = SimulatedFileSystem()
                let store = try makeStore(m, fs: fs)
                step = "the workload"
                let outcome = try RandomModelWorkload.run(store, seed: seed, transactions: transactions)
                total.committed += outcome.committed
                total.refused += outcome.refused
                step = "the checks"
                let found = try RandomModelWorkload.disagreements(store)
                for d in found { Issue.record("\(label): \(d)") }
                try store.close()
                // The program reopens its own store (the text it wrote reads as its model's).
                step = "reopening with the program's model"
                let again = try makeStore(m, fs: fs)
                #expect(try again.read { try $0.checkRecords() } == [], "\(label): after reopening")
                try again.close()
                if !found.isEmpty { print("\(label): the model\n" + m.schemaLines.joined(separator: "\n")) }
                text += m.schemaLines
            } catch {
                Issue.record("\(label): \(step): \(error)")
                if let model { print("\(label): the model\n" + model.schemaLines.joined(separator: "\n")) }
            }
        }
        // What the run covered: every form at least once (the generator's reach, not luck).
        if seeds.count > 1 {
            let all = text.joined(separator: "\n")
            let forms = ["@count", "@sum", "@avg", "@min", "@max", "lowercase:", "uppercase:", "canonical:", "now(", " * ", " / ",
                         "validate", "min ", "maxLength", "pattern ", "custom ", "transient", "unique (", "index (", ", ",
                         "delete nullify", "delete cascade", "delete deny", "to-one", "optional", "default"]
                + AttributeType.allCases.map { (t: AttributeType) -> String in "attribute \(t.rawValue)" }
            for form in forms { #expect(all.contains(form), "no model had \(form)") }
            #expect(total.committed > 300 && total.refused > 100, "\(total.committed) committed, \(total.refused) refused")
        }
    }
}
