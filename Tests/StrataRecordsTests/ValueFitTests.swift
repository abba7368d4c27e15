import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// Values that do not fit their attribute fail with a validation error naming entity and attribute;
/// values that fit come back exactly. The generated version of these checks is
/// ``ValuePropertyTests``.
@Suite struct ValueFitTests {
    static func model() throws -> Model {
        try Model {
            Entity("Box") {
                AttributeDescription("d", .decimal, optional: true)
                AttributeDescription("x", .double, optional: true)
                AttributeDescription("i", .int64, optional: true)
                AttributeDescription("s", .int16, optional: true)
                AttributeDescription("when", .date, optional: true)
                RelationshipDescription("parts", toMany: "Part", inverse: "box")
                DerivedAttributeDescription("total", .decimal, "parts.amount.@sum")
                DerivedAttributeDescription("quantities", .int64, "parts.quantity.@sum")
                DerivedAttributeDescription("quantitiesAsDouble", .double, "parts.quantity.@sum")
                DerivedAttributeDescription("quantitiesAsDecimal", .decimal, "parts.quantity.@sum")
                DerivedAttributeDescription("amountsAsDouble", .double, "parts.amount.@sum")
                DerivedAttributeDescription("partCountAsDouble", .double, "parts.@count")
                DerivedAttributeDescription("meanQuantity", .double, "parts.quantity.@avg", optional: true)
                DerivedAttributeDescription("meanAmount", .decimal, "parts.amount.@avg", optional: true)
                DerivedAttributeDescription("weights", .double, "parts.weight.@sum")
            }
            Entity("Part") {
                AttributeDescription("amount", .decimal, default: 0)
                AttributeDescription("quantity", .int64, default: 1)
                AttributeDescription("weight", .double, default: 0)
                RelationshipDescription("box", toOne: "Box", inverse: "parts")
                DerivedAttributeDescription("line", .decimal, "amount * quantity")
                DerivedAttributeDescription("square", .double, "weight * weight")
            }
        }
    }

    /// The validation error of one write, or nil when it committed.
    static func refusal(_ store: RecordStore, _ body: (RecordTransaction) throws -> Void) throws -> (String, String?)? {
        do {
            try store.write { tx in try body(tx) }
            return nil
        } catch StrataError.validation(let entity, let property, _) {
            return (entity, property)
        }
    }

    @Test func numbersThatDoNotFitAreRefusedNamingEntityAndAttribute() throws {
        let store = try makeStore(try Self.model())
        let box = try store.write { tx in try tx.insert("Box") }
        let refused: [(String, any ValueConvertible)] = [
            ("d", Double.infinity), ("d", -Double.infinity), ("d", Double.nan), ("d", Decimal.nan), ("d", 1e300),
            ("x", Double.nan), ("x", Double.infinity), ("x", Int64.max), ("x", Decimal(string: "0.1000000000000000000001")!),
            ("i", Double(Int64.max)), ("i", 0.5), ("i", Decimal(string: "1e19")!), ("i", ObjectID(entity: "Box", primaryKey: 7)),
            ("s", Int(Int16.max) + 1), ("s", Int(Int16.min) - 1), ("s", "12"), ("s", true),
            ("when", Date(timeIntervalSinceReferenceDate: .infinity)), ("when", Date(timeIntervalSinceReferenceDate: .nan)),
            ("d", ObjectID(entity: "Part", primaryKey: 1)),
        ]
        for (attribute, value) in refused {
            let onInsert = try Self.refusal(store) { tx in try tx.insert("Box", [attribute: value]) }
            #expect(onInsert?.0 == "Box" && onInsert?.1 == attribute, "insert \(attribute) = \(value)")
            let onUpdate = try Self.refusal(store) { tx in try tx.update(box, [attribute: value]) }
            #expect(onUpdate?.0 == "Box" && onUpdate?.1 == attribute, "update \(attribute) = \(value)")
        }
        #expect(try store.read { try $0.count("Box") } == 1)
        try expectConsistent(store)
    }

    @Test func numbersThatFitComeBackExactly() throws {
        let store = try makeStore(try Self.model())
        let accepted: [(String, any ValueConvertible, StoredValue)] = [
            ("d", 0.1, .decimal(Decimal(string: "0.1")!)),
            ("d", Int64.max, .decimal(Decimal(Int64.max))),
            ("d", Decimal.greatestFiniteMagnitude, .decimal(.greatestFiniteMagnitude)),
            ("d", -Decimal.greatestFiniteMagnitude, .decimal(-.greatestFiniteMagnitude)),
            ("x", -0.0, .double(-0.0)), ("x", Double.greatestFiniteMagnitude, .double(.greatestFiniteMagnitude)),
            ("x", Double.leastNonzeroMagnitude, .double(.leastNonzeroMagnitude)), ("x", 1 << 53, .double(9007199254740992)),
            ("x", Decimal(string: "0.1")!, .double(0.1)),
            ("i", Decimal(string: "9007199254740993")!, .int(9007199254740993)), ("i", Int64.min, .int(.min)),
            ("i", -9.007199254740992e15, .int(-9007199254740992)),
            ("s", Int16.max, .int(Int64(Int16.max))), ("s", Double(Int16.min), .int(Int64(Int16.min))),
        ]
        for (attribute, given, expected) in accepted {
            let id = try store.write { tx in try tx.insert("Box", [attribute: given]) }
            let got = try store.value(attribute, of: id)
            #expect(got == expected, "\(attribute) = \(given): got \(got)")
            if case .double(let e) = expected, case .double(let g) = got { #expect(e.bitPattern == g.bitPattern, "\(attribute) = \(given): sign of zero") }
        }
        try expectConsistent(store)
    }

    @Test func defaultsThatDoNotFitAreRefusedByTheModel() {
        let defaults: [(AttributeType, any ValueConvertible)] = [
            (.double, Double.nan), (.double, Double.infinity), (.decimal, Double.infinity), (.decimal, 1e300),
            (.int64, ObjectID(entity: "A", primaryKey: 1)), (.int16, 70_000), (.int64, 0.5), (.string, 3),
        ]
        for (type, value) in defaults {
            do {
                _ = try Model { Entity("A") { AttributeDescription("a", type, default: value) } }
                Issue.record("default \(value) accepted for \(type)")
            } catch StrataError.invalidModel(let entity, let property, _) {
                #expect(entity == "A" && property == "a")
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test func derivedArithmeticThatOverflowsFailsTheCommit() throws {
        let store = try makeStore(try Self.model())
        let huge = Decimal.greatestFiniteMagnitude / 2
        let line = try Self.refusal(store) { tx in try tx.insert("Part", ["amount": huge, "quantity": 3]) }
        #expect(line?.0 == "Part" && line?.1 == "line")
        let square = try Self.refusal(store) { tx in try tx.insert("Part", ["weight": 1e200]) }
        #expect(square?.0 == "Part" && square?.1 == "square")
        #expect(try store.read { try $0.count("Part") } == 0)
        try expectConsistent(store)
    }

    @Test func aggregatesThatOverflowFailTheCommit() throws {
        let store = try makeStore(try Self.model())
        let box = try store.write { tx in try tx.insert("Box") }
        let big = Decimal.greatestFiniteMagnitude / 2
        for _ in 0..<2 { _ = try store.write { tx in try tx.insert("Part", ["amount": big, "quantity": 0, "box": box]) } }
        // A decimal sum past Decimal's range used to commit as 0.
        let sum = try Self.refusal(store) { tx in try tx.insert("Part", ["amount": big, "quantity": 0, "box": box]) }
        #expect(sum?.0 == "Box" && sum?.1 == "total")
        // Integer sums leave Int64: an error too (as the README says), for every form.
        _ = try store.write { tx in try tx.insert("Part", ["quantity": Int64.max - 1, "box": box]) }
        let ints = try Self.refusal(store) { tx in try tx.insert("Part", ["quantity": 5, "box": box]) }
        #expect(ints?.0 == "Box")
        // A double sum that reaches infinity.
        let doubles = try Self.refusal(store) { tx in
            try tx.insert("Part", ["weight": Double.greatestFiniteMagnitude, "quantity": 0, "box": box])
            try tx.insert("Part", ["weight": Double.greatestFiniteMagnitude, "quantity": 0, "box": box])
        }
        #expect(doubles?.0 != nil)
        #expect(try store.value("total", of: box) == .decimal(big + big))
        try expectConsistent(store)
    }

    /// A decimal sum is exact whatever the order of its terms: the checker's sum from scratch
    /// (in primary-key order) agrees with the running sum, even where a partial sum in one
    /// order is not representable.
    @Test func decimalSumsAreExactInAnyOrder() throws {
        let store = try makeStore(try Self.model())
        let box = try store.write { tx in try tx.insert("Box") }
        let big = Decimal(string: "1e30")!, tiny = Decimal(string: "1e-30")!
        let a = try store.write { tx in try tx.insert("Part", ["amount": big, "quantity": 0, "box": box]) }
        _ = try store.write { tx in try tx.insert("Part", ["amount": -big, "quantity": 0, "box": box]) }
        _ = try store.write { tx in try tx.insert("Part", ["amount": tiny, "quantity": 0, "box": box]) }
        #expect(try store.value("total", of: box) == .decimal(tiny))
        try expectConsistent(store)
        // 1e30 + 1e-30 needs more than 38 digits: refused, nothing stored.
        let inexact = try Self.refusal(store) { tx in try tx.update(a, ["amount": Decimal(0)]) }
        #expect(inexact?.1 == "total")
        try expectConsistent(store)
    }

    /// Sums and counts declared in another numeric type than their values keep the running
    /// sum in the values' kind (integers summed into a double attribute used to corrupt it).
    @Test func sumsDeclaredInAnotherTypeStayRight() throws {
        let store = try makeStore(try Self.model())
        let box = try store.write { tx in try tx.insert("Box") }
        var parts: [ObjectID] = []
        for q in [3, 4, 5] as [Int64] {
            parts.append(try store.write { tx in try tx.insert("Part", ["quantity": q, "amount": Decimal(string: "0.1")!, "box": box]) })
        }
        try store.write { tx in try tx.delete(parts[0]) }
        #expect(try store.value("quantitiesAsDouble", of: box) == .double(9))
        #expect(try store.value("quantitiesAsDecimal", of: box) == .decimal(9))
        #expect(try store.value("amountsAsDouble", of: box) == .double(0.2))
        #expect(try store.value("partCountAsDouble", of: box) == .double(2))
        try expectConsistent(store)
    }

    /// An average of integers is their exact sum divided by their count, rounded once; going
    /// through Decimal and `NSDecimalNumber.doubleValue` was off by one ulp for some.
    @Test func averagesOfIntegersAreRoundedOnce() throws {
        let store = try makeStore(try Self.model())
        var rng = SplitMix64(seed: 0xA7E)
        for round in 0..<40 {
            let count = 1 + Int(rng.next() % 7)
            let quantities = (0..<count).map { _ in Int64(bitPattern: rng.next()) >> (1 + rng.next() % 60) }
            var sum: Int64 = 0, overflow = false
            for q in quantities {
                let (t, o) = sum.addingReportingOverflow(q)
                (sum, overflow) = (t, overflow || o)
            }
            if overflow { continue }
            let box = try store.write { tx in
                let box = try tx.insert("Box")
                for q in quantities { try tx.insert("Part", ["quantity": q, "box": box]) }
                return box
            }
            let expected = Self.nearest(sum, Int64(count))
            #expect(try store.value("meanQuantity", of: box) == .double(expected), "round \(round): \(quantities)")
        }
        try expectConsistent(store)
    }

    /// The checker compares exactly: a stored average one ulp off is reported.
    @Test func theCheckerNoticesOneUlp() throws {
        let store = try makeStore(try Self.model())
        let box = try store.write { tx in
            let box = try tx.insert("Box")
            for q in [1, 2, 2] as [Int64] { try tx.insert("Part", ["quantity": q, "box": box]) }
            return box
        }
        try store.write { tx in
            let e = tx.model.entity("Box")!
            let d = e.derivedAttributes.first { $0.name == "meanQuantity" }!
            guard case .double(let mean) = try tx.value("meanQuantity", of: box) else { Issue.record("no mean"); return }
            try tx.setFields(RowKey(entity: e.index, pk: box.primaryKey), [(d.field, .double(mean.nextUp))])
        }
        let problems = try store.read { try $0.checkRecords() }
        #expect(problems.contains { $0.contains("meanQuantity") }, "\(problems)")
    }

    /// `s / n` to the nearest double, independently of the engine: the quotient's decimal
    /// digits by long division (90 of them, then a sticky digit for any remainder), read by
    /// `Double(String)`, which rounds correctly.
    static func nearest(_ s: Int64, _ n: Int64) -> Double {
        let a = s.magnitude, b = n.magnitude
        var text = String(a / b) + "."
        var r = a % b
        for _ in 0..<90 {
            let (q, rest) = b.dividingFullWidth(r.multipliedFullWidth(by: 10))
            text += String(q)
            r = rest
        }
        if r != 0 { text += "1" }
        let x = Double(text)!
        return (s < 0) != (n < 0) ? -x : x
    }
}
