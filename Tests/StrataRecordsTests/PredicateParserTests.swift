import Foundation
import StrataStorage
import Testing
@testable import StrataRecords

@Suite struct PredicateParserTests {
    private func parse(_ format: String, _ arguments: (any PredicateArgument)?...) throws -> FetchPredicate {
        try FetchPredicate(format: format, argumentArray: arguments)
    }

    @Test func comparisonOperators() throws {
        let cases: [(String, ComparisonOperator)] = [
            ("a == 1", .equal), ("a = 1", .equal), ("a != 1", .notEqual), ("a <> 1", .notEqual),
            ("a < 1", .less), ("a <= 1", .lessOrEqual), ("a =< 1", .lessOrEqual),
            ("a > 1", .greater), ("a >= 1", .greaterOrEqual), ("a => 1", .greaterOrEqual),
            ("a IN 1", .in), ("a BEGINSWITH 1", .beginsWith), ("a ENDSWITH 1", .endsWith),
            ("a CONTAINS 1", .contains), ("a LIKE 1", .like), ("a MATCHES 1", .matches),
            ("a CONTAINSWORDS 1", .containsWords), ("a CONTAINSANYWORD 1", .containsAnyWord),
        ]
        for (format, op) in cases {
            #expect(try parse(format) == cmp(kp("a"), op, c(.int(1))), "\(format)")
        }
        #expect(try parse("a BETWEEN {1, 10}") == cmp(kp("a"), .between, .list([c(.int(1)), c(.int(10))])))
        #expect(try parse("a==1") == cmp(kp("a"), .equal, c(.int(1))))
        #expect(try parse("a>=-1") == cmp(kp("a"), .greaterOrEqual, c(.int(-1))))
    }

    @Test func stringOptions() throws {
        let cases: [(String, StringOptions)] = [
            ("[c]", [.caseInsensitive]), ("[d]", [.diacriticInsensitive]), ("[n]", [.normalized]),
            ("[cd]", [.caseInsensitive, .diacriticInsensitive]), ("[dc]", [.caseInsensitive, .diacriticInsensitive]),
            ("[CD]", [.caseInsensitive, .diacriticInsensitive]), ("[ c ]", [.caseInsensitive]),
        ]
        for (modifier, options) in cases {
            #expect(try parse("name BEGINSWITH\(modifier) 'x'")
                    == cmp(kp("name"), .beginsWith, c(.string("x")), .direct, options), "\(modifier)")
        }
        #expect(try parse("name ==[c] 'x'") == cmp(kp("name"), .equal, c(.string("x")), .direct, [.caseInsensitive]))
        #expect(try parse("name LIKE[cd] 'x*'") == cmp(kp("name"), .like, c(.string("x*")), .direct,
                                                       [.caseInsensitive, .diacriticInsensitive]))
    }

    @Test func keywordsAreCaseInsensitive() throws {
        #expect(try parse("name beginswith[cd] 'x' and not a in {1} Or b == nil")
                == parse("name BEGINSWITH[cd] 'x' AND NOT a IN {1} OR b == NIL"))
        #expect(try parse("a == yes") == cmp(kp("a"), .equal, c(.bool(true))))
        #expect(try parse("a == No") == cmp(kp("a"), .equal, c(.bool(false))))
        #expect(try parse("a == TRUE") == cmp(kp("a"), .equal, c(.bool(true))))
        #expect(try parse("a == false") == cmp(kp("a"), .equal, c(.bool(false))))
        #expect(try parse("a == null") == cmp(kp("a"), .equal, c(.null)))
        #expect(try parse("a == Nil") == cmp(kp("a"), .equal, c(.null)))
        #expect(try parse("truepredicate") == .constant(true))
        #expect(try parse("FALSEPREDICATE") == .constant(false))
    }

    @Test func precedenceIsNotThenAndThenOr() throws {
        let a = cmp(kp("a"), .equal, c(.int(1)))
        let b = cmp(kp("b"), .equal, c(.int(2)))
        let d = cmp(kp("d"), .equal, c(.int(3)))
        #expect(try parse("a == 1 OR b == 2 AND NOT d == 3") == .or([a, .and([b, .not(d)])]))
        #expect(try parse("a == 1 AND b == 2 OR d == 3") == .or([.and([a, b]), d]))
        #expect(try parse("(a == 1 OR b == 2) AND d == 3") == .and([.or([a, b]), d]))
        #expect(try parse("NOT (a == 1 AND b == 2)") == .not(.and([a, b])))
        #expect(try parse("a == 1 && b == 2 || !d == 3") == .or([.and([a, b]), .not(d)]))
        #expect(try parse("a == 1 AND b == 2 AND d == 3") == .and([a, b, d]))
        #expect(try parse("(a == 1 AND b == 2) AND d == 3") == .and([.and([a, b]), d]))
        #expect(try parse("NOT NOT a == 1") == .not(.not(a)))
        #expect(try parse("((a == 1))") == a)
        #expect(try parse("TRUEPREDICATE AND NOT FALSEPREDICATE") == .and([.constant(true), .not(.constant(false))]))
    }

    @Test func quantifiers() throws {
        #expect(try parse("ANY items.amount > 5") == cmp(kp("items.amount"), .greater, c(.int(5)), .any))
        #expect(try parse("SOME items.amount > 5") == cmp(kp("items.amount"), .greater, c(.int(5)), .any))
        #expect(try parse("ALL items.amount > 5") == cmp(kp("items.amount"), .greater, c(.int(5)), .all))
        #expect(try parse("NONE tags.name ==[c] 'x'")
                == cmp(kp("tags.name"), .equal, c(.string("x")), .none, [.caseInsensitive]))
        #expect(try parse("any %K < 3", "items.amount") == cmp(kp("items.amount"), .less, c(.int(3)), .any))
    }

    @Test func keyPathsAndAggregates() throws {
        #expect(try parse("list.name == 'Home'") == cmp(kp("list.name"), .equal, c(.string("Home"))))
        #expect(try parse("a.b.c == 1") == cmp(kp("a.b.c"), .equal, c(.int(1))))
        #expect(try parse("items.@count > 3") == cmp(.aggregate(.count, ["items"]), .greater, c(.int(3))))
        for f in ["sum", "avg", "min", "max"] {
            #expect(try parse("items.amount.@\(f) >= 100")
                    == cmp(.aggregate(AggregateFunction(rawValue: f)!, ["items", "amount"]), .greaterOrEqual, c(.int(100))))
        }
        #expect(try parse("items.amount.@SUM == 1") == cmp(.aggregate(.sum, ["items", "amount"]), .equal, c(.int(1))))
        #expect(try parse("SELF == 3") == cmp(.keyPath([]), .equal, c(.int(3))))
        #expect(try parse("SELF.name == 3") == cmp(kp("name"), .equal, c(.int(3))))
        #expect(try parse("SELF.@count == 3") == cmp(.aggregate(.count, []), .equal, c(.int(3))))
        // `#` makes a keyword a key, and lets a key start with a digit.
        #expect(try parse("#in == 1 AND a.#and == 2 AND #2nd == 3")
                == .and([cmp(kp("in"), .equal, c(.int(1))), cmp(kp("a.and"), .equal, c(.int(2))),
                         cmp(kp("2nd"), .equal, c(.int(3)))]))
        #expect(try parse("a.in == 1") == cmp(kp("a.in"), .equal, c(.int(1))))
        #expect(try parse("café_1 == 1") == cmp(kp("café_1"), .equal, c(.int(1))))
        #expect(try parse("items.amount.@sum > list.limit")
                == cmp(.aggregate(.sum, ["items", "amount"]), .greater, kp("list.limit")))
    }

    @Test func literals() throws {
        func rhs(_ literal: String) throws -> FetchExpression {
            guard case .comparison(let comparison) = try parse("a == \(literal)") else { return .list([]) }
            return comparison.rhs
        }
        #expect(try rhs("42") == c(.int(42)))
        #expect(try rhs("-42") == c(.int(-42)))
        #expect(try rhs("9223372036854775807") == c(.int(.max)))
        #expect(try rhs("-9223372036854775808") == c(.int(.min)))
        #expect(try rhs("99999999999999999999") == c(.decimal(Decimal(string: "99999999999999999999")!)))
        #expect(try rhs("0x1F") == c(.int(31)))
        #expect(try rhs("-0x10") == c(.int(-16)))
        #expect(try rhs("-0x8000000000000000") == c(.int(.min)))
        #expect(try rhs("0b101") == c(.int(5)))
        #expect(try rhs("0o17") == c(.int(15)))
        #expect(try rhs("1.5") == c(.double(1.5)))
        #expect(try rhs("-0.25") == c(.double(-0.25)))
        #expect(try rhs("1e3") == c(.double(1000)))
        #expect(try rhs("2.5E-3") == c(.double(0.0025)))
        #expect(try rhs("'single'") == c(.string("single")))
        #expect(try rhs("\"double\"") == c(.string("double")))
        #expect(try rhs(#"'it\'s'"#) == c(.string("it's")))
        #expect(try rhs(#""say \"hi\"""#) == c(.string("say \"hi\"")))
        #expect(try rhs(#""a\nb\tc\\d""#) == c(.string("a\nb\tc\\d")))
        #expect(try rhs(#""\u00e9\u{1F600}""#) == c(.string("é😀")))
        // Unknown escapes stay, so regex and LIKE patterns need no doubled backslashes.
        #expect(try rhs(#"'\d+\*'"#) == c(.string(#"\d+\*"#)))
        #expect(try rhs("'%@ stays'") == c(.string("%@ stays")))
        #expect(try rhs("{}") == .list([]))
        #expect(try rhs("{1, 'x', {2}, b.c, nil}")
                == .list([c(.int(1)), c(.string("x")), .list([c(.int(2))]), kp("b.c"), c(.null)]))
        #expect(try rhs(#"CAST(12.5, "NSDate")"#) == c(.date(Date(timeIntervalSinceReferenceDate: 12.5))))
        #expect(try rhs(#"CAST("1.1", "NSDecimalNumber")"#) == c(.decimal(Decimal(string: "1.1")!)))
        #expect(try rhs(#"CAST(1.1, "NSDecimalNumber")"#) == c(.decimal(Decimal(string: "1.1")!)))
        let uuid = UUID()
        #expect(try rhs("CAST('\(uuid.uuidString)', 'NSUUID')") == c(.uuid(uuid)))
        #expect(try rhs(#"CAST("00ff10", "NSData")"#) == c(.binary([0, 255, 16])))
        #expect(try rhs(#"CAST("inf", "NSNumber")"#) == c(.double(.infinity)))
    }

    @Test func constantOnTheLeftIsNormalized() throws {
        #expect(try parse("5 < itemCount") == cmp(kp("itemCount"), .greater, c(.int(5))))
        #expect(try parse("5 <= itemCount") == cmp(kp("itemCount"), .greaterOrEqual, c(.int(5))))
        #expect(try parse("5 > itemCount") == cmp(kp("itemCount"), .less, c(.int(5))))
        #expect(try parse("5 >= itemCount") == cmp(kp("itemCount"), .lessOrEqual, c(.int(5))))
        #expect(try parse("'x' == name") == cmp(kp("name"), .equal, c(.string("x"))))
        #expect(try parse("nil != name") == cmp(kp("name"), .notEqual, c(.null)))
        #expect(try parse("3 < items.@count") == cmp(.aggregate(.count, ["items"]), .greater, c(.int(3))))
        // No mirror image: kept as written.
        #expect(try parse("'ab' IN name") == cmp(c(.string("ab")), .in, kp("name")))
        #expect(try parse("'abc' BEGINSWITH name") == cmp(c(.string("abc")), .beginsWith, kp("name")))
        #expect(try parse("1 == 2") == cmp(c(.int(1)), .equal, c(.int(2))))
    }

    @Test func placeholders() throws {
        let date = Date(timeIntervalSinceReferenceDate: 1000)
        let uuid = UUID()
        #expect(try FetchPredicate(format: "itemCount > %@ AND searchName BEGINSWITH[cd] %@", 5, "ab")
                == .and([cmp(kp("itemCount"), .greater, c(.int(5))),
                         cmp(kp("searchName"), .beginsWith, c(.string("ab")), .direct,
                             [.caseInsensitive, .diacriticInsensitive])]))
        #expect(try parse("%K == %@", "list.name", "Home") == cmp(kp("list.name"), .equal, c(.string("Home"))))
        #expect(try parse("%K > 3", "items.@count") == cmp(.aggregate(.count, ["items"]), .greater, c(.int(3))))
        #expect(try parse("%K.@sum > 3", "items.amount") == cmp(.aggregate(.sum, ["items", "amount"]), .greater, c(.int(3))))
        #expect(try parse("list.%K == 1", "name") == cmp(kp("list.name"), .equal, c(.int(1))))
        #expect(try parse("a == %@", Int64(7)) == cmp(kp("a"), .equal, c(.int(7))))
        #expect(try parse("a == %@", Int32(7)) == cmp(kp("a"), .equal, c(.int(7))))
        #expect(try parse("a == %@", Int16(-7)) == cmp(kp("a"), .equal, c(.int(-7))))
        #expect(try parse("a == %@", 2.5) == cmp(kp("a"), .equal, c(.double(2.5))))
        #expect(try parse("a == %@", true) == cmp(kp("a"), .equal, c(.bool(true))))
        #expect(try parse("a == %@", date) == cmp(kp("a"), .equal, c(.date(date))))
        #expect(try parse("a == %@", uuid) == cmp(kp("a"), .equal, c(.uuid(uuid))))
        #expect(try parse("a == %@", Decimal(string: "1.25")!) == cmp(kp("a"), .equal, c(.decimal(Decimal(string: "1.25")!))))
        #expect(try parse("a == %@", [UInt8]([1, 2])) == cmp(kp("a"), .equal, c(.binary([1, 2]))))
        #expect(try parse("a == %@", StoredValue.string("v")) == cmp(kp("a"), .equal, c(.string("v"))))
        #expect(try parse("a == %@", nil) == cmp(kp("a"), .equal, c(.null)))
        let missing: String? = nil
        #expect(try parse("a == %@", missing) == cmp(kp("a"), .equal, c(.null)))
        let present: String? = "p"
        #expect(try parse("a == %@", present) == cmp(kp("a"), .equal, c(.string("p"))))
        #expect(try parse("a IN %@", ["x", "y"]) == cmp(kp("a"), .in, .list([c(.string("x")), c(.string("y"))])))
        #expect(try parse("a IN %@", [1, 2, 3]) == cmp(kp("a"), .in, .list([c(.int(1)), c(.int(2)), c(.int(3))])))
        #expect(try parse("a IN %@", [StoredValue.int(1), .string("x")]) == cmp(kp("a"), .in, .list([c(.int(1)), c(.string("x"))])))
        #expect(try parse("a BETWEEN %@", [1, 9]) == cmp(kp("a"), .between, .list([c(.int(1)), c(.int(9))])))
        #expect(try parse("a BETWEEN {%@, %@}", 1, 9.5) == cmp(kp("a"), .between, .list([c(.int(1)), c(.double(9.5))])))
        #expect(try parse("a == %d AND b == %i AND d == %f AND e == %ld", 3, 4, 0.5, 6)
                == .and([cmp(kp("a"), .equal, c(.int(3))), cmp(kp("b"), .equal, c(.int(4))),
                         cmp(kp("d"), .equal, c(.double(0.5))), cmp(kp("e"), .equal, c(.int(6)))]))
        #expect(try parse("a == %f", 2) == cmp(kp("a"), .equal, c(.double(2))))
        #expect(try parse("a == %@", PropertyPath("b.c")) == cmp(kp("a"), .equal, kp("b.c")))
        #expect(try FetchPredicate(format: "a == %@ OR b == %@", argumentArray: [1, "x"])
                == .or([cmp(kp("a"), .equal, c(.int(1))), cmp(kp("b"), .equal, c(.string("x")))]))
        // A placeholder constant on the left is normalized like a literal.
        #expect(try parse("%@ < n", 5) == cmp(kp("n"), .greater, c(.int(5))))
    }

    /// Each bad format with the character offset its error must name.
    @Test func errorsNamePositions() {
        let cases: [(format: String, arguments: [(any PredicateArgument)?], offset: Int, fragment: String)] = [
            ("name ==", [], 7, "expected a value"),
            ("name == 'abc", [], 8, "unterminated string"),
            ("name == \"abc\\", [], 8, "unterminated string"),
            ("a == %@", [], 5, "too few arguments"),
            ("a == %@ AND b == %@", [1], 17, "too few arguments"),
            ("a == 1", [2], 6, "too many arguments"),
            ("a ~ 1", [], 2, "unexpected character"),
            ("a == 1 AND", [], 10, "expected a value"),
            ("a == 1 b == 2", [], 7, "unexpected 'b'"),
            ("(a == 1", [], 7, "expected ')'"),
            ("a == 1)", [], 6, "unexpected ')'"),
            ("a 1", [], 2, "expected a comparison operator"),
            ("a ==[x] 1", [], 5, "unknown comparison option 'x'"),
            ("a ==[cx] 1", [], 6, "unknown comparison option 'x'"),
            ("a ==[c 1", [], 7, "']'"),
            ("a.@foo == 1", [], 2, "unknown aggregate"),
            ("a.@count.b == 1", [], 8, "nothing may follow"),
            ("ANY 5 == 1", [], 4, "must be followed by a key path"),
            ("ALL a.@count == 1", [], 4, "must be followed by a key path"),
            ("a BETWEEN 1", [], 10, "BETWEEN needs a list of two"),
            ("a BETWEEN {1, 2, 3}", [], 10, "BETWEEN needs a list of two"),
            ("%K == 1", [5], 0, "not a key path"),
            ("a == %d", ["x"], 5, "not an integer"),
            ("a == %f", ["x"], 5, "not a number"),
            ("a == %x", [], 5, "unknown placeholder"),
            ("a == $", [], 5, "variable name after '$'"),
            ("a == $1", [], 5, "variable name after '$'"),
            ("a == {1, 2", [], 10, "',' or '}'"),
            ("a == 0x", [], 5, "invalid number"),
            ("a == 0x8000000000000000", [], 5, "does not fit"),
            ("a == 0x10000000000000000", [], 5, "invalid number"),
            ("a == CAST('x', 'NSDate')", [], 5, "cannot CAST"),
            ("a == CAST(1, 'NSWhatever')", [], 5, "cannot CAST"),
            ("a == '\\u{110000}'", [], 6, "not a Unicode scalar"),
            ("AND a == 1", [], 0, "keyword 'AND'"),
            ("", [], 0, "expected a value"),
            ("a == 1 AND (b == 2 OR)", [], 21, "expected a value"),
            ("a == # 1", [], 5, "after '#'"),
            // Offsets count characters: "é" is one even when written as two scalars.
            ("e\u{301} == 'x", [], 5, "unterminated string"),
        ]
        for (format, arguments, offset, fragment) in cases {
            let message = invalidFetchMessage { _ = try FetchPredicate(format: format, argumentArray: arguments) }
            #expect(message?.contains("at offset \(offset)") == true, "\(format): \(message ?? "no error")")
            #expect(message?.contains(fragment) == true, "\(format): \(message ?? "no error")")
        }
    }

    @Test func errorsQuoteTheFormat() {
        let message = invalidFetchMessage { _ = try FetchPredicate(format: "a === 1") }
        #expect(message == "predicate format \"a === 1\": expected a value or key path, found '=' at offset 4")
    }
}
