import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

@Suite struct RowCodecTests {
    static let fields: [Field] = AttributeType.allCases.map { Field(name: $0.rawValue, kind: .attribute, type: $0, isOptional: true, defaultValue: nil, validation: []) }

    /// The write path builds index keys in place (`appendIndexKey`), a value that does not fit
    /// the key's budget taken back whole; the checker and the planner spell keys with
    /// `indexKey`. Both must give the same bytes, and a value past the budget none.
    @Test func indexKeysBuiltInPlaceAreTheKeysTheCheckerSpells() throws {
        let seed: UInt64 = 0x1DE7_4E75
        var rng = SplitMix64(seed: seed)
        func value() -> StoredValue {
            switch rng.next() % 9 {
            case 0: return .null
            case 1: return .int(Int64(bitPattern: rng.next()))
            case 2: return .double(Double(bitPattern: rng.next()))
            case 3: return .decimal(Decimal(sign: rng.next() % 2 == 0 ? .plus : .minus, exponent: Int(rng.next() % 20) - 10,
                                            significand: Decimal(rng.next() % 1_000_000)))
            case 4: return .bool(rng.next() % 2 == 0)
            case 5: return .date(Date(timeIntervalSinceReferenceDate: Double(Int64(rng.next() % 1_000_000_000))))
            case 6: return .string(String(repeating: "é", count: Int(rng.next() % 600)))
            case 7: return .binary((0..<Int(rng.next() % 1_000)).map { _ in UInt8(truncatingIfNeeded: rng.next() % 3) })
            default: return .string("sku-\(rng.next() % 10_000)")
            }
        }
        var buffer: [UInt8] = []
        var cut = 0
        for i in 0..<5_000 {
            let row = (0..<6).map { _ in value() }
            let fields = (0..<Int(rng.next() % 4) + 1).map { _ in Int(rng.next() % 6) }
            let pk = rng.next()
            buffer.removeAll(keepingCapacity: true)
            buffer.append(0xAB)  // bytes already in the buffer stay as they were
            KeyEncoding.appendIndexKey(of: row, fields: fields, pk: pk, to: &buffer)
            let expected = KeyEncoding.indexKey(fields.map { row[$0] }, pk: pk)
            #expect(buffer == [0xAB] + expected, "seed \(seed), key \(i)")
            #expect(expected.count <= KeyEncoding.maxEncodedValuesBytes + 8, "seed \(seed), key \(i)")
            if expected.count > 600 { cut += 1 }
        }
        #expect(cut > 100, "seed \(seed): the keys must reach the budget often")
        // A fixed-width value after a string that filled the budget is left out whole.
        let long = StoredValue.string(String(repeating: "x", count: KeyEncoding.maxValueBytes))
        #expect(KeyEncoding.indexKey([long, .int(5)], pk: 7) == KeyEncoding.indexKey([long], pk: 7))
        #expect(KeyEncoding.indexKey([.string("a"), .int(5)], pk: 7).count == 1 + 1 + 2 + 1 + 8 + 8)
        for _ in 0..<100 {
            let a = rng.next(), b = rng.next()
            #expect(RecordTrees.withPair(a, b) { Array($0) } == RecordTrees.pair(a, b))
        }
    }

    @Test func decimalsRoundTripExactly() throws {
        let texts = ["0", "1", "-1", "12.345", "-12.345", "0.000001", "123456789012345678901234567890", "-99999999999999999999.99", "18446744073709551616", "1e100", "-3.4e-50"]
        for t in texts {
            let d = try #require(Decimal(string: t, locale: Locale(identifier: "en_US_POSIX")))
            var out: [UInt8] = []
            DecimalCoding.append(d, to: &out)
            let back = DecimalCoding.decode(sign: out[0], exponent: out[1], mantissa: out[3...])
            #expect(back == d, "\(t): \(String(describing: back))")
            #expect(DecimalCoding.parts(d) == DecimalCoding.fastParts(d) || !DecimalCoding.layoutIsKnown)
        }
        #expect(DecimalCoding.layoutIsKnown)
    }

    /// The integer fast path of running decimal sums must give Foundation's exact answers,
    /// and step aside (nil) rather than overflow.
    @Test func fastDecimalSumsAgreeWithFoundation() throws {
        let seed: UInt64 = 0xDEC0_5E7D
        var rng = SplitMix64(seed: seed)
        func random() -> Decimal {
            let mantissa: UInt64 = switch rng.next() % 4 {
            case 0: rng.next() % 100
            case 1: rng.next() % 1_000_000_000
            case 2: rng.next()                      // near UInt64's limit: overflow must be caught
            default: UInt64(rng.next() % 10) * 1_000_000_000_000_000_000
            }
            let exponent = Int(rng.next() % 25) - 12
            return Decimal(sign: rng.next() % 2 == 0 ? .plus : .minus, exponent: exponent, significand: Decimal(mantissa))
        }
        var fast = 0
        for i in 0..<20_000 {
            let a = random(), b = random(), subtracting = rng.next() % 2 == 0
            let expected = subtracting ? a - b : a + b
            if let got = DecimalCoding.fastSum(a, b, subtracting: subtracting) {
                fast += 1
                #expect(got == expected, "seed \(seed), case \(i): \(a) \(subtracting ? "-" : "+") \(b) = \(expected), fast path \(got)")
            }
        }
        #expect(fast > 5_000, "seed \(seed): the fast path ran only \(fast) times")
    }

    /// A running decimal sum keeps its total as parts between additions: its totals are, part
    /// for part, those of a chain of `Decimal` additions through the fast path with the wide
    /// accumulator after its first refusal (how it summed before), and equal Foundation's sums.
    @Test func runningDecimalSumsKeepTheFastPathsParts() throws {
        let seed: UInt64 = 0x5_0DEC_0107
        var rng = SplitMix64(seed: seed)
        func random() -> Decimal {
            let mantissa: UInt64 = switch rng.next() % 5 {
            case 0: rng.next() % 100
            case 1: rng.next() % 100_000
            case 2: rng.next() % 1_000_000_000
            case 3: rng.next() >> (rng.next() % 4)  // near UInt64's limit: the sum goes wide
            default: UInt64(rng.next() % 10) * 1_000_000_000_000_000_000
            }
            let exponent = Int(rng.next() % 9) - 4 + (rng.next() % 8 == 0 ? Int(rng.next() % 30) - 15 : 0)
            return Decimal(sign: rng.next() % 2 == 0 ? .plus : .minus, exponent: exponent, significand: Decimal(mantissa))
        }
        var wentWide = 0
        for round in 0..<2_000 {
            let start = random()
            var sum = AggregateArithmetic.DecimalSum(start)
            var chain: Decimal? = start
            var wide: WideDecimal?
            var exact = start
            for step in 0..<Int(rng.next() % 12) {
                let value = random(), subtracting = rng.next() % 3 == 0
                sum.add(value, subtracting: subtracting)
                exact = subtracting ? exact - value : exact + value
                if let current = chain, let next = DecimalCoding.fastSum(current, value, subtracting: subtracting) {
                    chain = next
                } else {
                    if let current = chain { wide = WideDecimal(current); chain = nil }
                    wide!.add(WideDecimal(value), subtracting: subtracting)
                }
                // Both refuse a total no `Decimal` holds exactly, or both give the same parts.
                let total = try? sum.total()
                let before = try? chain ?? wide!.decimal()
                #expect(total.map(DecimalCoding.parts) == before.map(DecimalCoding.parts),
                        "seed \(seed) round \(round) step \(step): \(String(describing: total)) against \(String(describing: before))")
                // While 64-bit mantissas hold it, Foundation's sum is exact too.
                if chain != nil {
                    #expect(total == exact, "seed \(seed) round \(round) step \(step): \(String(describing: total)) against Foundation's \(exact)")
                }
            }
            if chain == nil { wentWide += 1 }
        }
        #expect(wentWide > 50, "seed \(seed): only \(wentWide) sums left 64 bits")
    }

    /// Near the top of `Decimal`'s exponent range a running sum's parts can stand for a value
    /// Foundation's initialiser cannot make (10 × 10^127 compacts to 1 × 10^128: NaN): the sum
    /// goes on exactly from its parts, and a total no `Decimal` can be made of is an overflow,
    /// never NaN taken for a value.
    @Test func decimalSumsNearTheTopOfTheRangeStayExact() throws {
        func decimal(_ text: String) -> Decimal { Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))! }
        let half = decimal("5e127")

        var tooLarge = AggregateArithmetic.DecimalSum(half)
        tooLarge.add(half)
        #expect(throws: AggregateArithmetic.Overflow.self) { try tooLarge.total() }

        var back = tooLarge
        back.add(half, subtracting: true)
        #expect(try back.total() == half)

        var widened = tooLarge
        widened.add(decimal("1e100"))
        #expect(try widened.total() == decimal("10000000000000000000000000001e100"))

        // A sum nothing was added to is its start, whatever it is.
        #expect(try AggregateArithmetic.DecimalSum(.nan).total().isNaN)
        #expect(try AggregateArithmetic.DecimalSum(half).total() == half)
    }

    /// The fast decimal order must be Foundation's, and step aside (nil) where it cannot tell.
    @Test func fastDecimalComparisonsAgreeWithFoundation() throws {
        let seed: UInt64 = 0xC0_4EA2
        var rng = SplitMix64(seed: seed)
        func random() -> Decimal {
            let mantissa: UInt64 = switch rng.next() % 5 {
            case 0: rng.next() % 100
            case 1: rng.next() % 1_000_000_000
            case 2: rng.next()
            case 3: 0
            default: UInt64(rng.next() % 10) * 1_000_000_000_000_000_000
            }
            let exponent = Int(rng.next() % 50) - 25
            return Decimal(sign: rng.next() % 2 == 0 ? .plus : .minus, exponent: exponent, significand: Decimal(mantissa))
        }
        var fast = 0
        for i in 0..<50_000 {
            let a = random()
            // Often the same value spelt another way (12.30 against 12.3), or a near neighbour.
            let b = switch rng.next() % 3 {
            case 0: a * 10 / 10
            case 1: a + Decimal(sign: .plus, exponent: Int(rng.next() % 10) - 5, significand: 1)
            default: random()
            }
            let expected = a < b ? -1 : (a == b ? 0 : 1)
            // "Did it change?" answers as Foundation's `==` does, by the fast path or not.
            #expect(StoredValue.decimal(a).isIdentical(to: .decimal(b)) == (expected == 0), "seed \(seed), case \(i): \(a) identical to \(b)")
            if let got = DecimalCoding.fastCompare(a, b) {
                fast += 1
                #expect(got == expected, "seed \(seed), case \(i): \(a) against \(b): \(expected), fast path \(got)")
            }
        }
        #expect(fast > 20_000, "seed \(seed): the fast path ran only \(fast) times")
    }

    @Test func everyTypeRoundTripsAndDamageNeverTraps() throws {
        let fields = Self.fields
        let values: [StoredValue] = [.bool(true), .int(-7), .int(123_456), .int(Int64.min), .double(-0.5), .decimal(Decimal(string: "-12.345")!),
                               .string("Café ☕️"), .date(Date(timeIntervalSinceReferenceDate: 12345.5)), .uuid(UUID()), .binary([0, 1, 255])]
        let row = values
        let bytes = RowCodec.encode(row, fields: fields)
        #expect(try RowCodec.decode(bytes, fields: fields) == row)
        var withNils = row
        withNils[2] = .null
        withNils[6] = .null
        #expect(try RowCodec.decode(RowCodec.encode(withNils, fields: fields), fields: fields) == withNils)
        // Truncations and random damage: a value or a typed error, never a trap.
        var rng = SplitMix64(seed: 77)
        for n in 0..<bytes.count { _ = try? RowCodec.decode(Array(bytes.prefix(n)), fields: fields) }
        for _ in 0..<5_000 {
            var b = bytes
            for _ in 0...Int(rng.next() % 4) { b[Int(rng.next() % UInt64(b.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            do { _ = try RowCodec.decode(b, fields: fields) } catch let e as StrataError {
                guard case .corrupt = e else { Issue.record("seed 77: \(e)"); continue }
            }
        }
    }

    /// A scan's partial decode (the fields a predicate reads) gives the full decode's values
    /// for those fields and `.null` for the rest, for every subset of fields and rows with
    /// fields absent; damaged bytes are a typed error or a value, never a trap.
    @Test func partialDecodesAgreeWithTheFullDecode() throws {
        let fields = Self.fields
        let full: [StoredValue] = [.bool(false), .int(-7), .int(123_456), .int(Int64.max), .double(2.5),
                                   .decimal(Decimal(string: "99.99")!), .string("Crème"), .date(Date(timeIntervalSinceReferenceDate: 7)),
                                   .uuid(UUID()), .binary([9, 8])]
        let seed: UInt64 = 0x5EED_DEC0
        var rng = SplitMix64(seed: seed)
        for _ in 0..<500 {
            var row = full
            for i in row.indices where rng.next() % 3 == 0 { row[i] = .null }
            let needed = fields.indices.map { _ in rng.next() % 2 == 0 }
            let bytes = RowCodec.encode(row, fields: fields)
            let partial = try bytes.withUnsafeBytes { try RowCodec.decode($0, fields: fields, needed: needed) }
            #expect(partial == zip(row, needed).map { $1 ? $0 : .null }, "seed \(seed): \(row) needing \(needed)")
            var damaged = bytes
            damaged[Int(rng.next() % UInt64(damaged.count))] = UInt8(truncatingIfNeeded: rng.next())
            let cut = Int(rng.next() % UInt64(damaged.count))
            for candidate in [damaged, Array(damaged.prefix(cut))] {
                do {
                    _ = try candidate.withUnsafeBytes { try RowCodec.decode($0, fields: fields, needed: needed) }
                } catch let error as StrataError {
                    guard case .corrupt = error else { Issue.record("seed \(seed): \(error)"); continue }
                }
            }
        }
    }

    /// Found by the random-model agreement test (ToolAgreementTests): the field count was read
    /// as a length bounded by the row's bytes, so a row with more fields than bytes (absent
    /// fields take none) failed to decode, as "row length 7 beyond the row's 5 bytes", right
    /// after its commit wrote it.
    @Test func rowsWithMoreFieldsThanBytesDecode() throws {
        let fields = Self.fields
        let empty = [StoredValue](repeating: .null, count: fields.count)
        #expect(RowCodec.encode(empty, fields: fields).count < fields.count)
        #expect(try RowCodec.decode(RowCodec.encode(empty, fields: fields), fields: fields) == empty)
        var one = empty
        one[0] = .bool(true)
        #expect(try RowCodec.decode(RowCodec.encode(one, fields: fields), fields: fields) == one)
        // More fields than the layout is still damage.
        var forged = RowCodec.encode(empty, fields: fields)
        forged[1] = UInt8(fields.count + 1)
        #expect(throws: StrataError.self) { try RowCodec.decode(forged, fields: fields) }

        let store = try makeStore(try Model {
            Entity("Sparse") { for t in AttributeType.allCases { AttributeDescription("f\(t.rawValue)", t, optional: true) } }
        })
        let id = try store.write { tx in try tx.insert("Sparse", ["fbool": false]) }
        #expect(try store.read { try $0.values(of: id) }?["fbool"] == .bool(false))
        try expectConsistent(store)
    }
}
