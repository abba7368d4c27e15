import Foundation
import Testing
@testable import StrataRecords

@Suite struct PredicateDescriptionTests {
    @Test func descriptionsReadLikeFormatStrings() throws {
        let cases: [(String, String)] = [
            ("itemCount > 5 AND searchName BEGINSWITH[cd] 'ab'", #"itemCount > 5 AND searchName BEGINSWITH[cd] "ab""#),
            ("a = 1 OR b <> 2 AND NOT c =< 3", "a == 1 OR b != 2 AND NOT c <= 3"),
            ("(a == 1 OR b == 2) AND c == 3", "(a == 1 OR b == 2) AND c == 3"),
            ("NOT (a == 1 AND b == 2)", "NOT (a == 1 AND b == 2)"),
            ("some items.amount > 5", "ANY items.amount > 5"),
            ("items.amount.@avg >= 1.5", "items.amount.@avg >= 1.5"),
            ("a IN {1, 'x', nil, TRUE}", #"a IN {1, "x", nil, TRUE}"#),
            ("a BETWEEN {1, 10}", "a BETWEEN {1, 10}"),
            ("#in == 1 AND #2nd == 2", "#in == 1 AND #2nd == 2"),
            ("SELF == 1 OR SELF.@count == 0", "SELF == 1 OR SELF.@count == 0"),
            ("5 < n", "n > 5"),
            ("a == 'say \"hi\"\\n'", #"a == "say \"hi\"\n""#),
            ("TRUEPREDICATE OR FALSEPREDICATE", "TRUEPREDICATE OR FALSEPREDICATE"),
        ]
        for (format, expected) in cases {
            #expect(try FetchPredicate(format: format).description == expected)
        }
        let date = Date(timeIntervalSinceReferenceDate: 86400.5)
        #expect(try FetchPredicate(format: "d == %@", date).description == #"d == CAST(86400.5, "NSDate")"#)
        #expect(try FetchPredicate(format: "d == %@", Decimal(string: "1.10")!).description == #"d == CAST("1.1", "NSDecimalNumber")"#)
        #expect(try FetchPredicate(format: "d == %@", [UInt8]([0, 171])).description == #"d == CAST("00ab", "NSData")"#)
    }

    @Test func degenerateTreesPrintAsTheirEquivalents() {
        let a = cmp(kp("a"), .equal, c(.int(1)))
        #expect(FetchPredicate.and([]).description == "TRUEPREDICATE")
        #expect(FetchPredicate.or([]).description == "FALSEPREDICATE")
        #expect(FetchPredicate.and([a]).description == "a == 1")
        #expect(FetchPredicate.and([.or([a])]).description == "a == 1")
        #expect(FetchPredicate.not(.and([a, .or([a, a])])).description == "NOT (a == 1 AND (a == 1 OR a == 1))")
    }

    @Test func formatsRoundTrip() throws {
        let formats = [
            "a == 1 OR b == 2 AND NOT c == 3",
            "(a == 1 OR b == 2) AND (c == 3 OR d == 4)",
            "a == 1 AND (b == 2 AND c == 3)",
            "(a == 1 OR b == 2) OR c == 3",
            "NOT NOT (a == 1)",
            "ALL items.amount.#in >[cdn] -2.5e-07",
            "NONE tags.name LIKE[c] '*a?\\\\*'",
            "name MATCHES '\\\\d+[a-z]*'",
            "a IN {{1, 2}, b.c, SELF, items.@max}",
            "a == 99999999999999999999",
            "'x' IN tags",
            "x == CAST('inf', 'NSNumber') OR y == CAST('-inf', 'NSDate')",
            "x\u{301} == '\u{301}\u{0}\u{7f}\r'",
        ]
        for format in formats {
            let parsed = try FetchPredicate(format: format)
            #expect(try FetchPredicate(format: parsed.description) == parsed, "\(format) → \(parsed.description)")
        }
    }

    /// Random trees (of the shapes the parser makes) through `description` and back. The seed
    /// is random each run and printed on failure; set STRATA_PREDICATE_SEED to replay one.
    @Test func randomTreesRoundTrip() throws {
        let seed = ProcessInfo.processInfo.environment["STRATA_PREDICATE_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        var generator = RandomPredicates(seed: seed)
        var failures = 0
        for n in 0..<3000 where failures < 5 {
            let predicate = generator.predicate(depth: 4)
            let text = predicate.description
            do {
                let parsed = try FetchPredicate(format: text)
                if parsed != predicate {
                    failures += 1
                    Issue.record("seed \(seed), tree \(n): \(text) parsed back as \(parsed.description)\n\(predicate)\n\(parsed)")
                }
            } catch {
                failures += 1
                Issue.record("seed \(seed), tree \(n): \(text) did not parse: \(error)")
            }
        }
    }
}

/// Random predicates in normal form: what the parser yields, so equality after a round trip
/// is exact (no constant-on-the-left ordering comparisons, quantifiers only on key paths,
/// compounds of two or more).
struct RandomPredicates {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    /// SplitMix64: small, and the same sequence on every platform for a given seed.
    private mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    private mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    private mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    private mutating func pick<T>(_ xs: [T]) -> T { xs[below(xs.count)] }

    mutating func predicate(depth: Int) -> FetchPredicate {
        if depth == 0 || chance(35) {
            return chance(92) ? .comparison(comparison()) : .constant(chance(50))
        }
        switch below(3) {
        case 0: return .and((0..<(2 + below(3))).map { _ in predicate(depth: depth - 1) })
        case 1: return .or((0..<(2 + below(3))).map { _ in predicate(depth: depth - 1) })
        default: return .not(predicate(depth: depth - 1))
        }
    }

    private static let operators: [ComparisonOperator] = [
        .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .in, .between,
        .beginsWith, .endsWith, .contains, .like, .matches, .containsWords, .containsAnyWord,
    ]

    private mutating func comparison() -> Comparison {
        let op = pick(Self.operators)
        let quantifier: Quantifier = chance(25) ? pick([.any, .all, .none]) : .direct
        var lhs: FetchExpression
        if quantifier != .direct {
            lhs = .keyPath(path())
        } else {
            switch below(10) {
            case 0..<6: lhs = .keyPath(path())
            case 6..<8: lhs = .aggregate(pick([.count, .sum, .avg, .min, .max]), path())
            case 8: lhs = .constant(value())
            default: lhs = list(depth: 1)
            }
        }
        let rhs: FetchExpression
        if op == .between {
            rhs = .list([expression(depth: 1), expression(depth: 1)])
        } else {
            rhs = expression(depth: 2)
        }
        var options: StringOptions = []
        if chance(30) { options = StringOptions(rawValue: UInt8(1 + below(7))) }
        var result = Comparison(lhs, op, rhs, quantifier: quantifier, options: options)
        if PredicateParser.normalized(result) != result {
            // The parser would mirror it; a constant on both sides is left alone.
            lhs = .keyPath(path())
            result = Comparison(lhs, op, rhs, quantifier: quantifier, options: options)
        }
        return result
    }

    private mutating func expression(depth: Int) -> FetchExpression {
        switch below(10) {
        case 0..<6: return .constant(value())
        case 6..<8: return .keyPath(path())
        case 8: return .aggregate(pick([.count, .sum, .avg, .min, .max]), path())
        default: return depth > 0 ? list(depth: depth - 1) : .constant(value())
        }
    }

    private mutating func list(depth: Int) -> FetchExpression {
        .list((0..<below(4)).map { _ in expression(depth: depth) })
    }

    private static let names = [
        "name", "amount", "items", "list", "tags", "in", "and", "ANY", "self", "Self", "nil",
        "cast", "_x", "café", "x1", "1st", "Ω", "e\u{301}", "truepredicate", "beginsWith",
    ]

    private mutating func path() -> [String] {
        (0..<below(4)).map { _ in pick(Self.names) }
    }

    private static let stringPieces = [
        "a", "B", "é", "e\u{301}", "\u{301}", "\"", "'", "\\", "\n", "\t", "\r", "\u{0}", "\u{1b}",
        "\u{7f}", "%@", "%K", "*", "?", "[c]", " AND ", "😀", "ß", "{", "}", "(", "#", "@count", "\r\n",
    ]

    private mutating func value() -> StoredValue {
        switch below(10) {
        case 0: return .null
        case 1: return .bool(chance(50))
        case 2:
            return .int(pick([0, 1, -1, Int64.max, Int64.min, Int64(bitPattern: next()), Int64(below(1000)) - 500]))
        case 3:
            var d = Double(bitPattern: next())
            while !d.isFinite { d = Double(bitPattern: next()) }
            return .double(pick([d, 0.5, -0.0, 1e300, .leastNonzeroMagnitude, Double(below(100)) / 8, d]))
        case 4:
            let digits = String(next() % 100_000_000_000)
            let scale = below(digits.count + 1)
            let text = (chance(50) ? "-" : "") + digits.prefix(digits.count - scale) + "." + digits.suffix(scale)
            return .decimal(Decimal(string: text.hasPrefix(".") || text.hasPrefix("-.") ? text.replacingOccurrences(of: ".", with: "0.") : text)!)
        case 5, 6:
            return .string((0..<below(6)).map { _ in pick(Self.stringPieces) }.joined())
        case 7:
            var t = Double(bitPattern: next())
            while !t.isFinite { t = Double(bitPattern: next()) }
            return .date(Date(timeIntervalSinceReferenceDate: chance(50) ? t : Double(below(1_000_000)) / 4))
        case 8:
            return .uuid(UUID())
        default:
            return .binary((0..<below(5)).map { _ in UInt8(truncatingIfNeeded: next()) })
        }
    }
}
