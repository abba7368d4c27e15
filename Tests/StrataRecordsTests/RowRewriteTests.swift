import Foundation
import StrataStorage
import StrataTesting
import Synchronization
import Testing
@testable import StrataRecords

/// `updateAll` rewriting rows from their scanned bytes and `deleteAll` deleting them
/// (``RowRewrite``): what they store, the counts and sums they move, the change set and history
/// they report and the errors they raise are those of changing each object in turn, whichever
/// fields and entities they take and whatever the transaction did to the rows before and after.
@Suite struct RowRewriteTests {
    /// Memos a validation rule refuses, once a test says so: rows stored before then hold a
    /// value the commit now refuses. Tests run in parallel: each memo names its seed.
    static let refused = Mutex<Set<String>>([])

    /// Accounts with sums over their entries; entries whose `amount`, `units`, `flag` and
    /// `memo` nothing but those sums reads (the rewrite takes them), a `weight` under a double
    /// sum, a `note` an audit copies and an indexed `code` (the general path takes those).
    static func model() throws -> Model {
        try Model {
            Entity("Account") {
                AttributeDescription("name", .string)
                RelationshipDescription("entries", toMany: "Entry", inverse: "account", deleteRule: .cascade)
                DerivedAttributeDescription("total", .decimal, "entries.amount.@sum")
                DerivedAttributeDescription("units", .int64, "entries.units.@sum")
                DerivedAttributeDescription("entryCount", .int64, "entries.@count")
                DerivedAttributeDescription("weight", .double, "entries.weight.@sum")
                DerivedAttributeDescription("doubled", .decimal, "total * 2")
                RelationshipDescription("charges", toMany: "Charge", inverse: "account")
                DerivedAttributeDescription("chargeTotal", .decimal, "charges.amount.@sum")
                DerivedAttributeDescription("chargeUnits", .int64, "charges.units.@sum")
                DerivedAttributeDescription("chargeCount", .int64, "charges.@count")
            }
            // Deleted from their bytes: a to-one whose inverse is a to-many, an index, counts
            // and sums over them.
            Entity("Charge") {
                AttributeDescription("amount", .decimal, default: Decimal(0))
                AttributeDescription("units", .int32, default: 0)
                AttributeDescription("code", .string, optional: true)
                RelationshipDescription("account", toOne: "Account", inverse: "charges")
                DerivedAttributeDescription("accountName", .string, "account.name", optional: true)
                FetchIndex("code")
            }
            Entity("Entry") {
                AttributeDescription("memo", .string, validation: [.custom(name: "not refused") { value in
                    guard case .string(let memo) = value else { return nil }
                    return RowRewriteTests.refused.withLock { $0.contains(memo) } ? "\(memo) is refused" : nil
                }])
                AttributeDescription("amount", .decimal, default: Decimal(0))
                AttributeDescription("units", .int16, default: 1)
                AttributeDescription("weight", .double, optional: true)
                AttributeDescription("flag", .bool, optional: true)
                AttributeDescription("note", .string, optional: true)
                AttributeDescription("code", .string, optional: true)
                RelationshipDescription("account", toOne: "Account", inverse: "entries")
                RelationshipDescription("audits", toMany: "Audit", inverse: "entry")
                DerivedAttributeDescription("accountName", .string, "account.name", optional: true)
                FetchIndex("code")
            }
            Entity("Audit") {
                AttributeDescription("label", .string, optional: true)
                RelationshipDescription("entry", toOne: "Entry", inverse: "audits")
                DerivedAttributeDescription("entryNote", .string, "entry.note", optional: true)
            }
        }
    }

    static func filled(seed: UInt64) throws -> RecordStore {
        var random = SplitMix64(seed: seed)
        let store = try makeStore(try model(), history: .on)
        try store.write { tx in
            let accounts = try (0..<5).map { try tx.insert("Account", ["name": "Account \($0)"]) }
            for index in 0..<150 {
                var values: [String: any ValueConvertible] = [
                    "memo": "memo \(index % 7)/\(seed)", "amount": Decimal(Int.random(in: -200..<400, using: &random)) / 4,
                    "units": Int16.random(in: -50...50, using: &random), "code": "c\(index % 11)",
                ]
                if Bool.random(using: &random) { values["flag"] = Bool.random(using: &random) }
                if Bool.random(using: &random) { values["note"] = "note \(index % 5)" }
                if Bool.random(using: &random) { values["weight"] = Double(index) / 8 }
                let entry = try tx.insert("Entry", values)
                // A few entries belong to no account: they move no sum.
                if index % 13 != 0 { try tx.set("account", of: entry, to: accounts[Int.random(in: 0..<5, using: &random)]) }
                if index % 10 == 0 { try tx.set("entry", of: try tx.insert("Audit", ["label": "a\(index)"]), to: entry) }
            }
            for index in 0..<100 {
                var values: [String: any ValueConvertible] = [
                    "amount": Decimal(Int.random(in: -100..<100, using: &random)) / 8,
                    "units": Int32.random(in: -1_000...1_000, using: &random),
                ]
                if index % 3 != 0 { values["code"] = "k\(index % 7)" }
                let charge = try tx.insert("Charge", values)
                if index % 11 != 0 { try tx.set("account", of: charge, to: accounts[Int.random(in: 0..<5, using: &random)]) }
            }
        }
        return store
    }

    /// One step of a random history, run on both stores.
    enum Step {
        case updateAll(FetchRequest, [String: any ValueConvertible])
        case deleteAll(FetchRequest)
        case update(Int, [String: any ValueConvertible])
        /// An object of the entity, by its position among them.
        case delete(String, Int)
        case read(String, Int)
    }

    static let entities = ["Entry", "Charge", "Audit"]

    /// A step as a failure prints it.
    static func describe(_ step: Step) -> String {
        func text(_ request: FetchRequest) -> String { "\(request.entity) \(request.predicate.map { "\($0)" } ?? "")" }
        switch step {
        case .updateAll(let request, let values): return "updateAll \(text(request)) \(values.keys.sorted())"
        case .deleteAll(let request): return "deleteAll \(text(request))"
        case .update(let i, let values): return "update Entry \(i) \(values.keys.sorted())"
        case .delete(let entity, let i): return "delete \(entity) \(i)"
        case .read(let entity, let i): return "read \(entity) \(i)"
        }
    }

    static func randomValues(_ random: inout SplitMix64, seed: UInt64) -> [String: any ValueConvertible] {
        let choices: [[String: any ValueConvertible]] = [
            ["amount": Decimal(Int.random(in: -40...40, using: &random)) / 8],
            ["units": Int16.random(in: -9...9, using: &random)],
            ["amount": Decimal(3), "units": Int16(2)],
            ["flag": Bool.random(using: &random)],
            ["flag": StoredValue.null],
            ["memo": "memo \(Int.random(in: 0..<9, using: &random))/\(seed)"],
            ["amount": Decimal(Int.random(in: 0...3, using: &random)), "memo": "set"],
            ["weight": Double(Int.random(in: 0...9, using: &random))],
            ["note": "new note"],
            ["code": "c3"],
            ["amount": StoredValue.null],
        ]
        return choices[Int.random(in: 0..<choices.count, using: &random)]
    }

    static func randomRequest(_ random: inout SplitMix64, seed: UInt64) throws -> FetchRequest {
        let threshold = Int.random(in: -50...100, using: &random)
        let format = [
            "amount > \(threshold)", "units < \(threshold % 20)", "flag == true", "account.name == 'Account \(abs(threshold) % 5)'",
            "memo == 'memo \(abs(threshold) % 7)/\(seed)'", "amount > \(threshold) AND units > \(threshold % 20)",
        ][Int.random(in: 0..<6, using: &random)]
        return FetchRequest("Entry", predicate: try FetchPredicate(format: format))
    }

    /// A request for `deleteAll`: charges and audits are deleted from their bytes, entries (they
    /// have audits) the general way.
    static func randomDeletion(_ random: inout SplitMix64, seed: UInt64) throws -> FetchRequest {
        let threshold = Int.random(in: -20...20, using: &random)
        let (entity, format) = [
            ("Charge", "amount > \(threshold)"), ("Charge", "units < \(threshold * 50)"),
            ("Charge", "account.name == 'Account \(abs(threshold) % 5)'"), ("Charge", "code == 'k\(abs(threshold) % 7)'"),
            ("Audit", "label BEGINSWITH 'a\(abs(threshold) % 10)'"), ("Entry", "amount > \(threshold * 5)"),
        ][Int.random(in: 0..<6, using: &random)]
        return FetchRequest(entity, predicate: try FetchPredicate(format: format))
    }

    /// The steps on `store`: `updateAll` as itself (`batch`) or as an update of each object
    /// the request fetches.
    static func run(_ steps: [Step], on store: RecordStore, batch: Bool) throws -> (counts: [Int], changes: [String]) {
        let (counts, changes) = try store.writeReportingChanges { tx -> [Int] in
            var objects: [String: [ObjectID]] = [:]
            for entity in Self.entities {
                objects[entity] = try tx.objects(entity).sorted { $0.primaryKey < $1.primaryKey }
            }
            func object(_ entity: String, _ i: Int) -> ObjectID? {
                guard let all = objects[entity], !all.isEmpty else { return nil }
                return all[i % all.count]
            }
            var counts: [Int] = []
            for step in steps {
                switch step {
                case .updateAll(let request, let values):
                    if batch {
                        counts.append(try tx.updateAll(request, set: values))
                    } else {
                        let ids = try tx.fetch(request)
                        for id in ids { try tx.update(id, values) }
                        counts.append(ids.count)
                    }
                case .deleteAll(let request):
                    if batch {
                        counts.append(try tx.deleteAll(request))
                    } else {
                        var deleted = 0
                        for id in try tx.fetch(request) where try tx.values(of: id) != nil {
                            try tx.delete(id)
                            deleted += 1
                        }
                        counts.append(deleted)
                    }
                case .update(let i, let values):
                    if let id = object("Entry", i), try tx.values(of: id) != nil { try tx.update(id, values) }
                case .delete(let entity, let i):
                    if let id = object(entity, i), try tx.values(of: id) != nil { try tx.delete(id) }
                case .read(let entity, let i):
                    if let id = object(entity, i) { _ = try tx.values(of: id) }
                }
            }
            return counts
        }
        func lines(_ rows: [RecordChanges.Row], _ kind: String) -> [String] {
            rows.map { "\(kind) \($0.id) \($0.changedFields) \(String(describing: $0.previous)) → \(String(describing: $0.values))" }
        }
        // Rows a caller changed are listed in the order of their first change, as the general
        // path lists them; rows only derivation changed (the accounts' sums) in the order the
        // settle reached them, which the deltas' timing moves: compared as a set.
        let all = lines(changes.inserted, "+") + lines(changes.updated, "~") + lines(changes.deleted, "-")
        let derivedOnly = all.filter { $0.hasPrefix("~ Account/") }
        return (counts, all.filter { !$0.hasPrefix("~ Account/") } + derivedOnly.sorted())
    }

    @Test(arguments: Array(UInt64(1)...12))
    func aRewriteEqualsUpdatingEachObject(seed: UInt64) throws {
        var random = SplitMix64(seed: seed &* 104_729)
        let batch = try Self.filled(seed: seed)
        let single = try Self.filled(seed: seed)
        defer { try? batch.close(); try? single.close() }
        for round in 0..<6 {
            var steps: [Step] = []
            for _ in 0..<Int.random(in: 1...5, using: &random) {
                let entity = Self.entities[Int.random(in: 0..<3, using: &random)]
                switch Int.random(in: 0..<8, using: &random) {
                case 0, 1, 2: steps.append(.updateAll(try Self.randomRequest(&random, seed: seed), Self.randomValues(&random, seed: seed)))
                case 3, 4: steps.append(.deleteAll(try Self.randomDeletion(&random, seed: seed)))
                case 5: steps.append(.update(Int.random(in: 0..<200, using: &random), Self.randomValues(&random, seed: seed)))
                case 6: steps.append(.delete(entity, Int.random(in: 0..<200, using: &random)))
                default: steps.append(.read(entity, Int.random(in: 0..<200, using: &random)))
                }
            }
            // Some rounds refuse a memo that stored rows hold: every row the steps rewrite with
            // it must fail the commit, as updating it does.
            let refusing: Set<String> = Int.random(in: 0..<4, using: &random) == 0 ? ["memo \(round % 7)/\(seed)"] : []
            Self.refused.withLock { $0.formUnion(refusing) }
            defer { Self.refused.withLock { $0.subtract(refusing) } }
            let what = "seed \(seed) round \(round), refusing \(refusing): \(steps.map(Self.describe))"
            let expected = Result { try Self.run(steps, on: single, batch: false) }
            let got = Result { try Self.run(steps, on: batch, batch: true) }
            switch (expected, got) {
            case (.success(let expected), .success(let got)):
                #expect(got.counts == expected.counts, "\(what)")
                #expect(got.changes == expected.changes, "\(what)")
            case (.failure(let expected), .failure(let got)):
                #expect("\(got)" == "\(expected)", "\(what)")
            default:
                Issue.record("\(what): one store failed, the other did not: \(expected) / \(got)")
            }
            #expect(try ReplicatedContent.ofStore(batch) == ReplicatedContent.ofStore(single), "\(what)")
            let historyOf = { (store: RecordStore) in
                try store.history().map { transaction in
                    let all = transaction.changes.map { "\($0.id) \($0.values.sorted { $0.key < $1.key })" }
                    return all.filter { !$0.hasPrefix("Account/") } + all.filter { $0.hasPrefix("Account/") }.sorted()
                }
            }
            #expect(try historyOf(batch) == historyOf(single), "\(what)")
            let problems = try batch.read { try $0.checkRecords() }
            #expect(problems.isEmpty, "\(what): \(problems)")
        }
    }

    /// The plan is made only where the rewrite changes what updating each object would.
    @Test func aPlanIsMadeOnlyWhereNothingElseReadsTheChange() throws {
        let model = try Self.model()
        let entry = model.entities.first { $0.name == "Entry" }!
        func plan(_ names: [String], _ values: [String: StoredValue] = [:]) -> RowRewrite? {
            var row = [StoredValue](repeating: .null, count: entry.fields.count)
            for (name, value) in values { row[entry.fieldIndex[name]!] = value }
            return RowRewrite(entry, setting: names.map { entry.fieldIndex[$0]! }, to: row, model: model)
        }
        #expect(plan(["amount"], ["amount": .decimal(1)])?.sums.map(\.source) == [entry.fieldIndex["amount"]!])
        #expect(plan(["amount", "units"], ["amount": .decimal(1), "units": .int(2)])?.sums.count == 2)
        #expect(plan(["flag"])?.sums.isEmpty == true)
        #expect(plan(["memo"], ["memo": .string("m")]) != nil)
        #expect(plan(["weight"], ["weight": .double(1)]) == nil, "a double sum's rounding depends on the order")
        #expect(plan(["note"], ["note": .string("n")]) == nil, "an audit copies it")
        #expect(plan(["code"], ["code": .string("c")]) == nil, "an index holds it")
        #expect(plan(["amount"]) == nil, "a required value set to nil fails at commit")
        #expect(plan(["units"], ["units": .int(40_000)]) == nil, "out of its range")
        Self.refused.withLock { _ = $0.insert("bad") }
        defer { Self.refused.withLock { _ = $0.remove("bad") } }
        #expect(plan(["memo"], ["memo": .string("bad")]) == nil, "a rule refuses it")
        func deletion(_ name: String) -> RowRewrite? {
            RowRewrite(deleting: model.entities.first { $0.name == name }!, model: model)
        }
        #expect(deletion("Charge")?.sums.count == 3, "a count and two sums over charges")
        #expect(deletion("Audit")?.sums.isEmpty == true)
        #expect(deletion("Entry") == nil, "its audits are a to-many")
        #expect(deletion("Account") == nil, "its entries cascade")
    }

    /// Bags with the integer sum of their balls' sizes.
    static func bags() throws -> Model {
        try Model {
            Entity("Bag") {
                AttributeDescription("name", .string)
                RelationshipDescription("balls", toMany: "Ball", inverse: "bag")
                DerivedAttributeDescription("total", .int64, "balls.size.@sum")
            }
            Entity("Ball") {
                AttributeDescription("size", .int64, default: 0)
                AttributeDescription("label", .string, optional: true)
                RelationshipDescription("bag", toOne: "Bag", inverse: "balls")
            }
        }
    }

    /// A sum the rewrite moves out of its range fails at the next settle, as the general path's
    /// does: the commit throws and nothing is stored; a parent deleted before then takes no
    /// sum, and the commit goes through.
    @Test(arguments: [false, true])
    func anOverflowingSumFailsAtTheSettle(deletingTheParent: Bool) throws {
        let store = try makeStore(try Self.bags())
        defer { try? store.close() }
        let bag = try store.write { tx in
            let bag = try tx.insert("Bag", ["name": "b"])
            for _ in 0..<3 { try tx.set("bag", of: try tx.insert("Ball", ["size": Int64(1)]), to: bag) }
            return bag
        }
        let commit = {
            try store.write { tx in
                #expect(try tx.updateAll(FetchRequest("Ball"), set: ["size": Int64.max]) == 3)
                if deletingTheParent { try tx.delete(bag) }
            }
        }
        let sizes = { try store.read { reader in try reader.objects("Ball").map { try reader.value("size", of: $0) } } }
        if deletingTheParent {
            try commit()
            #expect(try sizes() == [.int(.max), .int(.max), .int(.max)])
        } else {
            #expect(throws: StrataError.self) { try commit() }
            #expect(try sizes() == [.int(1), .int(1), .int(1)])
        }
        #expect(try store.read { try $0.checkRecords() }.isEmpty)
    }

    /// An integer sum overflows only when its total leaves the 64-bit range, whatever order
    /// the rows' values entered and left in (a rewrite's are applied after the other rows').
    @Test func anIntegerSumIsExactWhateverTheOrder() throws {
        let store = try makeStore(try Self.bags())
        defer { try? store.close() }
        let (a, c) = try store.write { tx in
            let bag = try tx.insert("Bag", ["name": "b"])
            let a = try tx.insert("Ball", ["size": Int64.max, "label": "a"])
            let b = try tx.insert("Ball", ["size": -Int64.max + 1, "label": "b"])
            let c = try tx.insert("Ball", ["size": Int64(0), "label": "c"])
            for ball in [a, b, c] { try tx.set("bag", of: ball, to: bag) }
            return (a, c)
        }
        #expect(try store.read { try $0.value("total", of: $0.objects("Bag")[0]) } == .int(1))
        // A's max leaves and C's max enters, settled together at the commit (C's value entered
        // first): 1 + max overflows 64 bits on the way, the total is 1 again.
        try store.write { tx in
            #expect(try tx.updateAll(FetchRequest("Ball", predicate: try FetchPredicate(format: "label == 'a'")),
                                     set: ["size": Int64(0)]) == 1)
            try tx.update(c, ["size": Int64.max])
        }
        #expect(try store.read { try $0.value("total", of: $0.objects("Bag")[0]) } == .int(1))
        #expect(try store.read { try $0.value("size", of: a) } == .int(0))
        #expect(try store.read { try $0.checkRecords() }.isEmpty)
    }
}
