import Foundation
import Testing
import StrataStorage
import StrataTesting
@testable import StrataRecords

/// A comparison decided on a field's stored bytes (``StoredComparison``) answers as the
/// general path does on the decoded row: same result, or both throw.
@Suite struct StoredComparisonTests {
    private static func model() throws -> Model {
        try Model(entities: [Entity("Probe") {
            AttributeDescription("i16", .int16, optional: true)
            AttributeDescription("i64", .int64, optional: true)
            AttributeDescription("d", .decimal, optional: true)
            AttributeDescription("x", .double, optional: true)
            AttributeDescription("t", .date, optional: true)
            AttributeDescription("b", .bool, optional: true)
            AttributeDescription("s", .string, optional: true)
        }])
    }

    private static func decimal(_ rng: inout SplitMix64) -> Decimal {
        let magnitude: Decimal
        switch rng.next() % 6 {
        case 0: magnitude = 0
        case 1: magnitude = Decimal(rng.next() % 1_000)
        case 2: magnitude = Decimal(rng.next())
        // Mantissas beyond 64 bits: left to the general path.
        case 3: magnitude = Decimal(rng.next()) * Decimal(rng.next() % 100_000 + 2)
        default: magnitude = Decimal(rng.next() % 20_000)
        }
        let exponent = Int(rng.next() % 45) - 22
        let value = Decimal(sign: rng.next() % 2 == 0 ? .plus : .minus, exponent: exponent, significand: magnitude)
        return rng.next() % 40 == 0 ? .nan : value
    }

    private static func integer(_ rng: inout SplitMix64, bits: Int) -> Int64 {
        switch rng.next() % 5 {
        case 0: return [0, 1, -1][Int(rng.next() % 3)]
        case 1: return bits == 16 ? [Int64(Int16.min), Int64(Int16.max)][Int(rng.next() % 2)] : [Int64.min, Int64.max][Int(rng.next() % 2)]
        case 2: return Int64(rng.next() % 2_000) - 1_000
        default:
            let value = Int64(bitPattern: rng.next())
            return bits == 16 ? Int64(Int16(truncatingIfNeeded: value)) : value
        }
    }

    private static func double(_ rng: inout SplitMix64) -> Double {
        switch rng.next() % 8 {
        case 0: return .nan
        case 1: return [0.0, -0.0, .infinity, -.infinity][Int(rng.next() % 4)]
        case 2: return Double(Int64(rng.next() % 2_000) - 1_000)
        default: return Double(Int64(bitPattern: rng.next()) % 1_000_000) / 8
        }
    }

    /// A value for `name`'s field, nil a tenth of the time.
    private static func value(_ name: String, _ rng: inout SplitMix64) -> StoredValue {
        if rng.next() % 10 == 0 { return .null }
        switch name {
        case "i16": return .int(integer(&rng, bits: 16))
        case "i64": return .int(integer(&rng, bits: 64))
        case "d": return .decimal(decimal(&rng))
        case "x": return .double(double(&rng))
        case "t": return .date(Date(timeIntervalSinceReferenceDate: double(&rng)))
        case "b": return .bool(rng.next() % 2 == 0)
        default: return .string("s\(rng.next() % 5)")
        }
    }

    /// A constant of any kind: the field's, another number kind, or one that never compares.
    private static func constant(_ rng: inout SplitMix64) -> StoredValue {
        switch rng.next() % 8 {
        case 0, 1: return .int(integer(&rng, bits: rng.next() % 2 == 0 ? 16 : 64))
        case 2, 3: return .decimal(decimal(&rng))
        case 4: return .double(double(&rng))
        case 5: return .date(Date(timeIntervalSinceReferenceDate: double(&rng)))
        case 6: return .bool(rng.next() % 2 == 0)
        default: return rng.next() % 2 == 0 ? .null : .string("s1")
        }
    }

    @Test func aStoredComparisonAnswersAsTheDecodedRow() throws {
        let seed: UInt64 = 20_261_129_89
        var rng = SplitMix64(seed: seed)
        let store = try makeStore(try Self.model())
        let names = ["i16", "i64", "d", "x", "t", "b"]
        let ops: [ComparisonOperator] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]
        let quantifiers: [Quantifier] = [.direct, .any, .all, .none]
        var decidedOnBytes = 0
        try store.read { r in
            let entity = try r.entity("Probe")
            let key = RowKey(entity: entity.index, pk: 1)
            for round in 0..<4_000 {
                let row = entity.fields.map { Self.value($0.name, &rng) }
                let bytes = RowCodec.encode(row, fields: entity.fields)
                let decoded = try RowCodec.decode(bytes, fields: entity.fields)
                for _ in 0..<6 {
                    let name = names[Int(rng.next() % UInt64(names.count))]
                    let field = try #require(entity.fieldIndex[name])
                    let constant = Self.constant(&rng)
                    let comparison = Comparison(.keyPath([name]), ops[Int(rng.next() % 6)], .constant(constant),
                                                quantifier: quantifiers[Int(rng.next() % 4)])
                    let compiled = try CompiledComparison(comparison, in: entity)
                    var cache = RegexCache()
                    let general = try compiled.evaluate(RowSubject(reader: r, key: key, row: decoded), cache: &cache)
                    let onBytes = try bytes.withUnsafeBytes {
                        try compiled.evaluate(RowBytesSubject(reader: r, key: key, bytes: $0, fields: entity.fields),
                                              cache: &cache)
                    }
                    #expect(onBytes == general,
                            "seed \(seed) round \(round): \(name) = \(decoded[field]) \(comparison.op.rawValue) \(constant) (\(comparison.quantifier))")
                    if try bytes.withUnsafeBytes({ try Self.decidesOnBytes(comparison, entity, $0) }) { decidedOnBytes += 1 }
                }
            }
        }
        // A quarter of the comparisons pair their kinds (and most of those rows decide on bytes).
        #expect(decidedOnBytes > 5_000, "seed \(seed)")
    }

    /// A scan's one walk of a row (``StoredRowFilter``) for an AND of one to four comparisons
    /// answers as the predicate does on the decoded row, or leaves the row to it; rows written
    /// by a shorter layout read their missing fields as nil; a damaged row (cut short) is never
    /// answered.
    @Test func aRowFilterAnswersAsThePredicateOnTheDecodedRow() throws {
        let seed: UInt64 = 20_261_129_91
        var rng = SplitMix64(seed: seed)
        let store = try makeStore(try Self.model())
        let names = ["i16", "i64", "d", "x", "t", "b", "s"]
        let ops: [ComparisonOperator] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]
        var answered = 0, filters = 0
        try store.read { r in
            let entity = try r.entity("Probe")
            let key = RowKey(entity: entity.index, pk: 1)
            for round in 0..<3_000 {
                var row = entity.fields.map { Self.value($0.name, &rng) }
                // A row of a shorter layout: its last fields were never written.
                let written = rng.next() % 5 == 0 ? Int(rng.next() % UInt64(entity.fields.count)) : entity.fields.count
                for i in written..<row.count { row[i] = .null }
                let bytes = RowCodec.encode(Array(row.prefix(written)), fields: Array(entity.fields.prefix(written)))
                let decoded = try RowCodec.decode(bytes, fields: entity.fields)
                #expect(decoded.count == row.count, "seed \(seed) round \(round)")
                let terms = (0..<(1 + Int(rng.next() % 4))).map { _ in
                    let name = names[Int(rng.next() % UInt64(names.count))]
                    // Mostly a constant of the field's own kind (those pair), else any.
                    let constant = rng.next() % 5 == 0 ? Self.constant(&rng) : Self.value(name, &rng)
                    return FetchPredicate.comparison(Comparison(.keyPath([name]), ops[Int(rng.next() % 6)], .constant(constant)))
                }
                let predicate = terms.count == 1 ? terms[0] : .and(terms)
                let compiled = try CompiledPredicate(predicate, for: entity)
                guard let filter = compiled.rowFilter else { continue }
                filters += 1
                let general = try compiled.evaluate(RowSubject(reader: r, key: key, row: decoded))
                if let answer = bytes.withUnsafeBytes({ filter.matches($0) }) {
                    answered += 1
                    #expect(answer == general, "seed \(seed) round \(round): \(predicate) on \(decoded)")
                }
                // Cut short: what decoding refuses, the filter never answers.
                let cut = Array(bytes.prefix(Int(rng.next() % UInt64(bytes.count))))
                let refused = (try? RowCodec.decode(cut, fields: entity.fields)) == nil
                if refused { #expect(cut.withUnsafeBytes { filter.matches($0) } == nil, "seed \(seed) round \(round)") }
                // Bytes changed at random: what the filter answers, the general path on the
                // same bytes answers too (and does not throw).
                var damaged = bytes
                for _ in 0..<(1 + Int(rng.next() % 3)) {
                    damaged[Int(rng.next() % UInt64(damaged.count))] = UInt8(truncatingIfNeeded: rng.next())
                }
                if let answer = damaged.withUnsafeBytes({ filter.matches($0) }) {
                    let onBytes = try? damaged.withUnsafeBytes {
                        try compiled.evaluate(RowBytesSubject(reader: r, key: key, bytes: $0, fields: entity.fields))
                    }
                    #expect(onBytes == answer, "seed \(seed) round \(round): damaged \(damaged)")
                }
            }
        }
        #expect(filters > 300 && answered > 250, "seed \(seed): \(filters) filters, \(answered) answered")
    }

    /// The order of two numbers at exponents up to 20 apart, magnitudes at the edges of 64
    /// bits and of 10^19, is Foundation's order of the same decimals.
    @Test func numbersOrderAsFoundationsDecimals() {
        let magnitudes: [UInt64] = [0, 1, 9, 10, 99, 1_000_000_000_000_000_000, 10_000_000_000_000_000_000,
                                    15_000_000_000_000_000_000, UInt64.max]
        let exponents = [-21, -20, -19, -18, -1, 0, 1, 18, 19, 20, 21]
        var numbers: [(StoredComparison.Number, Decimal)] = []
        for magnitude in magnitudes {
            for exponent in exponents {
                for negative in [false, true] {
                    let number = StoredComparison.Number(negative: negative, exponent: exponent, magnitude: magnitude)
                    let decimal = DecimalCoding.make(DecimalCoding.Parts(negative: negative && magnitude != 0, exponent: exponent,
                                                                         low: magnitude, high: 0))
                    numbers.append((number, decimal))
                }
            }
        }
        for (left, leftDecimal) in numbers {
            for (right, rightDecimal) in numbers {
                let expected = leftDecimal < rightDecimal ? -1 : (leftDecimal == rightDecimal ? 0 : 1)
                #expect(StoredComparison.Number.order(left, right) == expected, "\(leftDecimal) against \(rightDecimal)")
            }
        }
    }

    /// Bytes no valid row holds (a decimal's sign byte of 2, a mantissa longer than 16 bytes)
    /// are a typed error either way: the stored comparison leaves them to the decoding path.
    @Test func damagedDecimalBytesThrowAsTheDecodingPathDoes() throws {
        let store = try makeStore(try Self.model())
        try store.read { r in
            let entity = try r.entity("Probe")
            let key = RowKey(entity: entity.index, pk: 1)
            let field = try #require(entity.fieldIndex["d"])
            var row = [StoredValue](repeating: .null, count: entity.fields.count)
            row[field] = .decimal(Decimal(1234))
            let sound = RowCodec.encode(row, fields: entity.fields)
            // Version, count, bitmap, then the decimal: sign, exponent, length, mantissa.
            let start = sound.count - 5
            #expect(Array(sound[start...]) == [0, 0, 2, 0xD2, 0x04])
            var badSign = sound
            badSign[start] = 2
            var longMantissa = sound
            longMantissa[start + 2] = 17
            longMantissa += [UInt8](repeating: 1, count: 15)
            let compiled = try CompiledComparison(Comparison(.keyPath(["d"]), .less, .constant(.decimal(5))), in: entity)
            for bytes in [badSign, longMantissa] {
                #expect(throws: StrataError.self) {
                    var cache = RegexCache()
                    _ = try bytes.withUnsafeBytes {
                        try compiled.evaluate(RowBytesSubject(reader: r, key: key, bytes: $0, fields: entity.fields),
                                              cache: &cache)
                    }
                }
            }
        }
    }

    /// Whether the stored comparison decides `comparison` on `bytes` without the general path.
    private static func decidesOnBytes(_ comparison: Comparison, _ entity: EntityDescription,
                                       _ bytes: UnsafeRawBufferPointer) throws -> Bool {
        guard case .keyPath(let path) = comparison.lhs, case .constant(let constant) = comparison.rhs,
              let field = entity.fieldIndex[path[0]],
              let stored = StoredComparison(field: field, type: entity.fields[field].type, op: comparison.op,
                                            quantifier: comparison.quantifier, constant: constant)
        else { return false }
        return stored.evaluate(try RowCodec.storedValue(ofField: field, in: bytes, fields: entity.fields)) != nil
    }
}
