import Foundation
import Strata
import StrataRecords
import Testing

/// One attribute of each kind whose edge values a store may refuse: doubles (NaN and infinities
/// are refused), decimals (NaN is refused), dates (non-finite ones are refused), a string under a
/// length rule, and a Codable value (JSON has no NaN or infinity).
final class Sample: ManagedObject {
    @Attribute(default: "") var label: String
    @Attribute(default: 0) var reading: Double
    @Attribute(default: 0) var amount: Decimal
    @Attribute(default: Date(timeIntervalSinceReferenceDate: 0)) var at: Date
    @Attribute(default: "", validation: [.maximumLength(8)]) var code: String
    @CodableAttribute var weights: [Double] = []

    /// An initial value set in `init`, as a subclass's initializer would.
    convenience init(label: String, _ edge: EdgeValue) {
        self.init()
        self.label = label
        edge.set(self)
    }
}

/// A declared initial value that cannot be encoded: the attribute has no default, so a new
/// object's save asks for a value.
final class UnencodableDefault: ManagedObject {
    @Attribute(default: "") var label: String
    @CodableAttribute var weights: [Double] = [.nan]
}

/// Every edge value of `Sample`'s attributes and what a store does with it: keeps it exactly, or
/// refuses it with a typed error and keeps nothing.
struct EdgeValue: CustomStringConvertible {
    var description: String
    var key: String
    /// What the store holds when it takes the value (nil: it never can).
    var stored: StoredValue?
    /// The value as the key-based API takes it.
    var any: Any
    var set: (Sample) -> Void
    /// Whether the object (or a fresh read of it) holds exactly this value.
    var isHeld: (Sample) -> Bool
    /// The value every row starts from before the path writes the edge value: a value the
    /// store takes, unlike any edge value.
    var baseline: (Sample) -> Void
    var isBaseline: (Sample) -> Bool

    var isStorable: Bool { stored != nil }

    static func same(_ a: Double, _ b: Double) -> Bool { a.bitPattern == b.bitPattern }

    static func reading(_ name: String, _ v: Double, storable: Bool) -> EdgeValue {
        EdgeValue(description: "reading = \(name)", key: "reading", stored: storable ? .double(v) : nil, any: v,
                  set: { $0.reading = v }, isHeld: { same($0.reading, v) },
                  baseline: { $0.reading = 1.5 }, isBaseline: { $0.reading == 1.5 })
    }

    static func amount(_ name: String, _ v: Decimal, storable: Bool) -> EdgeValue {
        EdgeValue(description: "amount = \(name)", key: "amount", stored: storable ? .decimal(v) : nil, any: v,
                  set: { $0.amount = v }, isHeld: { v.isNaN ? $0.amount.isNaN : $0.amount == v },
                  baseline: { $0.amount = 2 }, isBaseline: { $0.amount == 2 })
    }

    static func at(_ name: String, _ seconds: Double, storable: Bool) -> EdgeValue {
        let v = Date(timeIntervalSinceReferenceDate: seconds)
        return EdgeValue(description: "at = \(name)", key: "at", stored: storable ? .date(v) : nil, any: v,
                         set: { $0.at = v }, isHeld: { same($0.at.timeIntervalSinceReferenceDate, seconds) },
                         baseline: { $0.at = Date(timeIntervalSinceReferenceDate: 3) },
                         isBaseline: { $0.at.timeIntervalSinceReferenceDate == 3 })
    }

    static func code(_ name: String, _ v: String, storable: Bool) -> EdgeValue {
        EdgeValue(description: "code = \(name)", key: "code", stored: storable ? .string(v) : nil, any: v,
                  set: { $0.code = v }, isHeld: { Array($0.code.utf8) == Array(v.utf8) },
                  baseline: { $0.code = "base" }, isBaseline: { $0.code == "base" })
    }

    static func weights(_ name: String, _ v: [Double], storable: Bool) -> EdgeValue {
        EdgeValue(description: "weights = \(name)", key: "weights",
                  stored: storable ? (try? StoredValue(encoding: v)) : nil, any: v,
                  set: { $0.weights = v },
                  isHeld: { $0.weights.count == v.count && zip($0.weights, v).allSatisfy { same($0, $1) } },
                  baseline: { $0.weights = [4] }, isBaseline: { $0.weights == [4] })
    }

    static var all: [EdgeValue] { [
        reading("NaN", .nan, storable: false),
        reading("+∞", .infinity, storable: false),
        reading("-∞", -.infinity, storable: false),
        reading("greatest finite", .greatestFiniteMagnitude, storable: true),
        reading("least nonzero", .leastNonzeroMagnitude, storable: true),
        amount("NaN", .nan, storable: false),
        amount("past its range (greatest × 10, which Foundation makes NaN)", .greatestFiniteMagnitude * 10, storable: false),
        amount("greatest finite", .greatestFiniteMagnitude, storable: true),
        amount("least finite", -.greatestFiniteMagnitude, storable: true),
        amount("least nonzero", .leastNonzeroMagnitude, storable: true),
        at("+∞", .infinity, storable: false),
        at("-∞", -.infinity, storable: false),
        at("NaN", .nan, storable: false),
        at("distant future", Date.distantFuture.timeIntervalSinceReferenceDate, storable: true),
        code("9 characters (length rule 8)", "123456789", storable: false),
        code("9 combined characters", String(repeating: "e\u{301}", count: 9), storable: false),
        code("8 characters of 16 bytes", String(repeating: "é", count: 8), storable: true),
        weights("[1, NaN]", [1, .nan], storable: false),
        weights("[+∞]", [.infinity], storable: false),
        weights("[-∞]", [-.infinity], storable: false),
        weights("[greatest, least nonzero]", [.greatestFiniteMagnitude, .leastNonzeroMagnitude], storable: true),
    ] }
}

/// Found from outside: an inserted object's unencodable Codable value was
/// saved as the default. The class, closed: every write path × every edge value has one
/// documented outcome — the store holds exactly the value, or the path throws a typed
/// `StrataError` and the store keeps what it held before (no row for a new object).
///
/// | path | refused value: the typed error, where |
/// |---|---|
/// | setter on a new object | `validation` at save |
/// | setter before `insert` | `validation` at save |
/// | initial value in `init` | `validation` at save |
/// | setter on a saved object | `validation` at save |
/// | `setValue(_:forKey:)`, new object | `validation` at the call (a Codable value) or at save |
/// | `setValue(_:forKey:)`, saved object | `validation` at the call (a Codable value) or at save |
/// | undo then redo of the change | `validation` at save |
/// | merge of another context's save | the writer's save throws `validation`; nothing to merge |
/// | `ModelContainer.updateAll(_:set:)` | `validation` (a Codable value: `invalidArgument` from `StoredValue(encoding:)`) |
/// | a migration stage's `update` | `validation` from the open; the store stays at its version |
/// | record layer `StoredValue(encoding:)` + `update` | `invalidArgument` (encoding) or `validation` (update) |
@Suite struct WritePathEdgeValueTests {
    /// The rows of the table: the write paths.
    enum Row: String, CaseIterable {
        case newSetter = "setter on a new object"
        case setterBeforeInsert = "setter before insert"
        case initialValue = "initial value in init"
        case savedSetter = "setter on a saved object"
        case setValueNew = "setValue(_:forKey:) on a new object"
        case setValueSaved = "setValue(_:forKey:) on a saved object"
        case undoRedo = "undo then redo"
        case merge = "merge of another context's save"
        case updateAll = "updateAll(_:set:)"
        case recordLayer = "record layer StoredValue(encoding:) and update"
    }

    /// Runs `body`, returning the `StrataError` it threw (nil if none); any other error fails.
    static func outcome(_ label: String, _ body: () throws -> Void) -> StrataError? {
        do { try body(); return nil } catch let error as StrataError { return error } catch {
            Issue.record("\(label): an untyped error \(error)")
            return .misuse("untyped")
        }
    }

    /// Whether `error` is the typed error the table documents for `edge` refused.
    static func isDocumented(_ error: StrataError, _ edge: EdgeValue, _ row: Row) -> Bool {
        switch error {
        case .validation(entity: "Sample", property: edge.key, _): return true
        case .invalidArgument: return edge.key == "weights" && (row == .updateAll || row == .recordLayer)
        default: return false
        }
    }

    /// A saved object holding the baseline values.
    static func savedSample(_ edge: EdgeValue, _ container: ModelContainer) throws -> Sample {
        let context = ModelContext(container)
        let sample = Sample()
        sample.label = "saved"
        edge.baseline(sample)
        context.insert(sample)
        try context.save()
        return sample
    }

    /// Runs `row` for `edge`; returns the error met and the object written (nil: a new object
    /// whose save was refused, so no row may exist).
    static func run(_ row: Row, _ edge: EdgeValue, _ container: ModelContainer, _ label: String) throws
        -> (error: StrataError?, object: ManagedObjectID?, wasSaved: Bool) {
        switch row {
        case .newSetter, .setterBeforeInsert, .initialValue, .setValueNew:
            let context = ModelContext(container)
            let sample: Sample
            var error: StrataError?
            switch row {
            case .initialValue:
                sample = Sample(label: "new", edge)
                context.insert(sample)
            case .setterBeforeInsert:
                sample = Sample()
                sample.label = "new"
                edge.set(sample)
                context.insert(sample)
            case .newSetter:
                sample = Sample()
                context.insert(sample)
                sample.label = "new"
                edge.set(sample)
            default:
                sample = Sample()
                context.insert(sample)
                sample.label = "new"
                error = outcome(label) { try sample.setValue(edge.any, forKey: edge.key) }
            }
            if error == nil { error = outcome(label) { try context.save() } }
            return (error, error == nil ? sample.objectID : nil, false)
        case .savedSetter, .setValueSaved, .undoRedo:
            let sample = try savedSample(edge, container)
            let context = try #require(sample.context)
            var error: StrataError?
            switch row {
            case .savedSetter: edge.set(sample)
            case .setValueSaved: error = outcome(label) { try sample.setValue(edge.any, forKey: edge.key) }
            default:
                context.undoStack = UndoStack()
                edge.set(sample)
                context.processPendingChanges()
                context.undo()
                #expect(edge.isBaseline(sample), "\(label): undo restores the baseline")
                context.redo()
            }
            if error == nil { error = outcome(label) { try context.save() } }
            return (error, sample.objectID, true)
        case .merge:
            let sample = try savedSample(edge, container)
            let merger = ModelContext(container)
            let seen = try merger.existingObject(with: sample.objectID, as: Sample.self)
            #expect(edge.isBaseline(seen), "\(label): the merging context holds the baseline")
            edge.set(sample)
            var notification: SaveNotification?
            let error = outcome(label) { notification = try sample.context?.save() }
            if let notification { merger.mergeChanges(from: notification) }
            // What the merging context holds is what the store holds.
            #expect(error == nil ? edge.isHeld(seen) : edge.isBaseline(seen), "\(label): the merged object")
            #expect(!merger.hasChanges, "\(label): a merge left changes to save")
            return (error, sample.objectID, true)
        case .updateAll:
            let sample = try savedSample(edge, container)
            let error = outcome(label) {
                let value: any ValueConvertible = edge.key == "weights" ? try StoredValue(encoding: edge.any as! [Double])
                                                                        : edge.stored ?? Self.rawStoredValue(edge)
                try container.updateAll(FetchDescriptor<Sample>(), set: [edge.key: value])
            }
            return (error, sample.objectID, true)
        case .recordLayer:
            let sample = try savedSample(edge, container)
            let error = outcome(label) {
                let value = edge.key == "weights" ? try StoredValue(encoding: edge.any as! [Double])
                                                  : edge.stored ?? Self.rawStoredValue(edge)
                try container.store.write { tx in try tx.update(Self.recordID(sample.objectID), [edge.key: value]) }
            }
            return (error, sample.objectID, true)
        }
    }

    /// The record layer's identifier of a saved object.
    static func recordID(_ id: ManagedObjectID) -> ObjectID {
        ObjectID(entity: id.entityName, primaryKey: id.primaryKey ?? 0)
    }

    /// The stored value an edge value would be if the store took it (for the paths that pass
    /// stored values).
    static func rawStoredValue(_ edge: EdgeValue) -> StoredValue {
        switch edge.any {
        case let v as Double: return .double(v)
        case let v as Decimal: return .decimal(v)
        case let v as Date: return .date(v)
        case let v as String: return .string(v)
        default: return .null
        }
    }

    @Test(arguments: Row.allCases)
    func everyEdgeValueIsStoredExactlyOrRefusedWithATypedError(row: Row) throws {
        var differing: [String] = []
        for edge in EdgeValue.all {
            let label = "\(row.rawValue) × \(edge)"
            try withContainer(for: [Sample.self]) { container in
                let (error, object, wasSaved) = try Self.run(row, edge, container, label)
                let reader = ModelContext(container)
                if edge.isStorable {
                    if let error { differing.append("\(label): refused (\(error))") }
                    guard let id = object else {
                        differing.append("\(label): nothing written")
                        return
                    }
                    let stored = try reader.existingObject(with: id, as: Sample.self)
                    if !edge.isHeld(stored) { differing.append("\(label): the store holds another value") }
                } else {
                    guard let error else {
                        let held = try object.map { try reader.existingObject(with: $0, as: Sample.self) }
                        differing.append("\(label): no error; the store holds "
                                         + (held.map { edge.isHeld($0) ? "the value" : "another value" } ?? "nothing"))
                        return
                    }
                    if !Self.isDocumented(error, edge, row) { differing.append("\(label): \(error), not the documented error") }
                    let samples = try reader.fetch(FetchDescriptor<Sample>())
                    if wasSaved {
                        if samples.count != 1 || !edge.isBaseline(samples[0]) {
                            differing.append("\(label): the store no longer holds the baseline")
                        }
                    } else if !samples.isEmpty {
                        differing.append("\(label): a refused new object was stored")
                    }
                }
            }
        }
        #expect(differing.isEmpty, "\(differing.count) cells differ:\n\(differing.joined(separator: "\n"))")
    }

    /// A migration stage's `update` writing each edge value: stored exactly, or the open throws
    /// `validation` and the store stays at its version with its rows as they were.
    @Test func aMigrationStageWritesEdgeValuesExactlyOrRefusesThem() throws {
        var differing: [String] = []
        for edge in EdgeValue.all {
            let label = "migration stage update × \(edge)"
            try withStorePath { path in
                let v1 = try ModelContainer(for: [Sample.self], path: path)
                let id = try Self.savedSample(edge, v1).objectID
                try v1.close()
                let source = try Model(for: [Sample.self], version: 1)
                let destination = try Model(for: [Sample.self], version: 2)
                let value = edge.key == "weights" ? (try? StoredValue(encoding: edge.any as! [Double])) ?? .null
                                                  : edge.stored ?? Self.rawStoredValue(edge)
                let (key, isStorable, weights, record) = (edge.key, edge.isStorable, edge.any as? [Double], Self.recordID(id))
                let plan = try MigrationPlan(stages: [
                    .custom(from: source, to: destination) { _, new in
                        if let weights, !isStorable {
                            // What a stage meets: encoding the value throws.
                            _ = try StoredValue(encoding: weights)
                            return
                        }
                        try new.update(record, [key: value])
                    },
                ])
                var error: StrataError?
                do {
                    let v2 = try ModelContainer(for: [Sample.self], path: path, migration: .plan(plan))
                    try v2.close()
                } catch let e as StrataError { error = e }
                let reopened = try error == nil ? ModelContainer(for: [Sample.self], path: path, migration: .plan(plan))
                                                : ModelContainer(for: [Sample.self], path: path)
                defer { try? reopened.close() }
                let sample = try ModelContext(reopened).existingObject(with: id, as: Sample.self)
                switch (edge.isStorable, error) {
                case (true, nil): if !edge.isHeld(sample) { differing.append("\(label): the store holds another value") }
                case (true, let error?): differing.append("\(label): refused (\(error))")
                case (false, nil): differing.append("\(label): no error; the store holds \(edge.isHeld(sample) ? "the value" : "another value")")
                case (false, let error?):
                    let documented: Bool
                    switch error {
                    case .validation(entity: "Sample", property: edge.key, _): documented = true
                    case .invalidArgument: documented = edge.key == "weights"
                    default: documented = false
                    }
                    if !documented { differing.append("\(label): \(error), not the documented error") }
                    if !edge.isBaseline(sample) { differing.append("\(label): the store no longer holds the baseline") }
                }
            }
        }
        #expect(differing.isEmpty, "\(differing.count) cells differ:\n\(differing.joined(separator: "\n"))")
    }

    /// The snippet of the report, as written: the save throws `validation` and stores nothing.
    @Test func theReportedSnippetThrowsValidationAtSave() throws {
        try withContainer(for: [Sample.self]) { container in
            let context = ModelContext(container)
            let w = Sample()
            w.label = "nan"
            w.weights = [1, .nan]
            context.insert(w)
            #expect(context.hasChanges)
            #expect {
                try context.save()
            } throws: { error in
                guard case .validation(entity: "Sample", property: "weights", _)? = error as? StrataError else { return false }
                return true
            }
            let stored = try ModelContext(container).fetchCount(FetchDescriptor<Sample>())
            #expect(stored == 0)
            // By key, the call itself refuses the value, with the encoder's reason.
            #expect {
                try w.setValue([2, Double.infinity], forKey: "weights")
            } throws: { error in
                guard case .validation(entity: "Sample", property: "weights", let reason)? = error as? StrataError else { return false }
                return reason.contains("cannot be stored as JSON")
            }
        }
    }

    /// The declared initial value is a write path too: one that cannot be encoded is no default,
    /// and a new object's save throws `validation` (nothing stored) until a value is set.
    @Test func anInitialValueThatCannotBeEncodedIsNoDefault() throws {
        try withContainer(for: [UnencodableDefault.self]) { container in
            let context = ModelContext(container)
            let object = UnencodableDefault()
            context.insert(object)
            #expect {
                try context.save()
            } throws: { error in
                guard case .validation(entity: "UnencodableDefault", property: "weights", _)? = error as? StrataError else { return false }
                return true
            }
            let before = try ModelContext(container).fetchCount(FetchDescriptor<UnencodableDefault>())
            #expect(before == 0)
            object.weights = [1]
            try context.save()
            let stored = try #require(try ModelContext(container).fetch(FetchDescriptor<UnencodableDefault>()).first)
            #expect(stored.weights == [1])
        }
    }
}
