import Foundation
import StrataStorage
import Testing
@testable import StrataRecords

@Suite struct PredicateEvaluatorTests {
    let when = Date(timeIntervalSinceReferenceDate: 700_000_000)
    let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    let object: TestObject

    init() {
        let home = TestObject(id: 100, ["name": .value(.string("Home")), "limit": .value(.int(10))])
        let items = [
            TestObject(id: 1, ["amount": .value(.int(3)), "price": .value(.double(1.5)),
                               "qty": .value(.int(1)), "tag": .value(.string("Red"))]),
            TestObject(id: 2, ["amount": .value(.int(7)), "price": .value(.decimal(Decimal(string: "2.25")!)),
                               "qty": .value(.decimal(Decimal(string: "0.1")!)), "tag": .value(.string("blue"))]),
            TestObject(id: 3, ["amount": .value(.null), "price": .value(.double(0.5)),
                               "qty": .value(.int(2)), "tag": .value(.string("Rosé"))]),
        ]
        object = TestObject(id: 10, [
            "name": .value(.string("Café")), "nfd": .value(.string("Cafe\u{301}")),
            "city": .value(.string("Straße")), "code": .value(.string("123")),
            "stars": .value(.string("a*b")), "pattern": .value(.string("C.*")), "badPattern": .value(.string("(")),
            "count": .value(.int(5)), "ratio": .value(.double(2.5)), "price": .value(.decimal(Decimal(string: "9.99")!)),
            "flag": .value(.bool(true)), "nothing": .value(.null), "when": .value(.date(when)),
            "uuid": .value(.uuid(uuid)), "bytes": .value(.binary([1, 2, 3])), "nan": .value(.double(.nan)),
            "list": .toOne(home), "noList": .toOne(nil),
            "items": .toMany(items), "empty": .toMany([]),
        ])
    }

    private func holds(_ format: String, _ arguments: (any PredicateArgument)?...) throws -> Bool {
        try FetchPredicate(format: format, argumentArray: arguments).evaluate(object)
    }

    /// Each format with the answer it must give on `object`.
    private func check(_ cases: [(String, Bool)], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for (format, expected) in cases {
            #expect(try holds(format) == expected, "\(format)", sourceLocation: sourceLocation)
        }
    }

    @Test func equalityAndOrder() throws {
        try check([
            ("count == 5", true), ("count = 5", true), ("count != 5", false), ("count > 4", true),
            ("count >= 5", true), ("count < 5", false), ("count <= 5", true), ("5 < count", false),
            ("4 < count", true), ("name == 'Café'", true), ("name < 'D'", true), ("name > 'D'", false),
            ("flag == YES", true), ("flag == NO", false), ("when == CAST(700000000, 'NSDate')", true),
            ("when > CAST(1, 'NSDate')", true), ("uuid == CAST('E621E1F8-C36C-495A-93FC-0C247A3E6E5F', 'NSUUID')", true),
            ("bytes == CAST('010203', 'NSData')", true), ("bytes == CAST('0102', 'NSData')", false),
            ("list.limit > count", true), ("count > list.limit", false), ("1 == 1", true), ("1 == 2", false),
            ("TRUEPREDICATE", true), ("FALSEPREDICATE", false), ("NOT count == 5", false),
            ("count == 5 AND name == 'x' OR flag == YES", true), ("count == 5 AND (name == 'x' OR flag == NO)", false),
        ])
        #expect(try holds("when == %@", when))
        #expect(try holds("when < %@", when.addingTimeInterval(1)))
        #expect(try holds("uuid == %@", uuid))
    }

    @Test func numbersCompareAcrossIntDoubleAndDecimal() throws {
        try check([
            ("count == 5.0", true), ("count == CAST('5', 'NSDecimalNumber')", true), ("count < 5.5", true),
            ("ratio > 2", true), ("ratio == CAST('2.5', 'NSDecimalNumber')", true),
            ("price > 9.9", true), ("price < 10", true), ("price == CAST('9.99', 'NSDecimalNumber')", true),
            ("count IN {1.0, 5.0}", true), ("ratio BETWEEN {2, 3}", true),
        ])
    }

    @Test func mismatchedKindsAreFalseNotErrors() throws {
        try check([
            ("name == 5", false), ("name > 5", false), ("name < 5", false), ("count == '5'", false),
            ("flag == 1", false), ("when == 700000000", false), ("uuid == 'x'", false),
            ("name != 5", true),  // != is the negation of ==
            ("nan == nan", false), ("nan > 1", false), ("nan < 1", false),
        ])
    }

    @Test func nilHandling() throws {
        try check([
            ("nothing == nil", true), ("nothing != nil", false), ("name == nil", false), ("name != nil", true),
            ("nothing < 5", false), ("nothing > 5", false), ("nothing >= nil", false), ("nothing == 0", false),
            ("list.name == nil", false), ("noList.name == nil", true), ("noList.name == 'Home'", false),
            ("noList.name != 'Home'", true), ("noList == nil", true), ("list == nil", false), ("list == 100", true),
            ("items.amount == nil", true), ("nothing IN {1, nil}", true), ("nothing BETWEEN {0, 10}", false),
        ])
    }

    @Test func toOneAndToManyPaths() throws {
        try check([
            ("list.name == 'Home'", true), ("list.name BEGINSWITH 'Ho'", true),
            // Without a quantifier a to-many path means ANY, as in Core Data.
            ("items.amount == 7", true), ("items.amount > 100", false), ("items.tag == 'blue'", true),
            ("ANY items.amount > 5", true), ("SOME items.amount > 100", false),
            ("ALL items.price > 0.25", true), ("ALL items.price > 1", false), ("ALL items.amount > 1", false),
            ("NONE items.price > 5", true), ("NONE items.price > 2", false),
            ("ANY empty.amount > 5", false), ("ALL empty.amount > 5", true), ("NONE empty.amount > 5", true),
            ("empty.amount == 5", false),
            // A to-many relationship itself is its objects' primary keys.
            ("items == 2", true), ("2 IN items", true), ("4 IN items", false), ("ANY items == 4", false),
            // A single value is a collection of one for the quantifiers.
            ("ALL count > 3", true), ("NONE count > 3", false), ("ANY count > 3", true),
            ("ANY items.tag BEGINSWITH[c] 'r'", true), ("ALL items.tag BEGINSWITH[c] 'r'", false),
        ])
    }

    @Test func aggregates() throws {
        try check([
            ("items.@count == 3", true), ("items.@count > 3", false), ("3 == items.@count", true),
            ("items.amount.@count == 3", true), ("empty.@count == 0", true), ("noList.items.@count == 0", true),
            ("items.amount.@sum == 10", true), ("items.amount.@avg == 5", true),
            ("items.amount.@min == 3", true), ("items.amount.@max == 7", true),
            ("items.price.@sum == 4.25", true), ("items.price.@max == CAST('2.25', 'NSDecimalNumber')", true),
            ("items.qty.@sum == CAST('3.1', 'NSDecimalNumber')", true),
            ("items.tag.@max == 'blue'", true), ("items.tag.@min == 'Red'", true),
            ("empty.amount.@sum == 0", true), ("empty.amount.@avg == nil", true),
            ("empty.amount.@min == nil", true), ("empty.amount.@max == nil", true),
            ("items.amount.@sum > list.limit", false), ("items.amount.@sum BETWEEN {10, 10}", true),
        ])
    }

    @Test func sumsStayExact() throws {
        let d = { (s: String) in StoredValue.decimal(Decimal(string: s)!) }
        #expect(try Aggregation.apply(.sum, to: .many([.int(1), .int(2)])) == .int(3))
        #expect(try Aggregation.apply(.sum, to: .many([.int(1), d("0.1"), d("0.2")])) == d("1.3"))
        // One arithmetic for fetch aggregates, derived attributes and the checker: an integer
        // sum that leaves Int64 is an error, not a decimal (docs/decisions.md).
        #expect(throws: StrataError.self) { try Aggregation.apply(.sum, to: .many([.int(.max), .int(1)])) }
        #expect(throws: StrataError.self) { try Aggregation.apply(.sum, to: .many([.int(.max), .int(1), .int(-2)])) }
        #expect(try Aggregation.apply(.sum, to: .many([.int(1), .double(0.5), d("0.25")])) == .double(1.75))
        #expect(try Aggregation.apply(.sum, to: .many([.null, .string("x")])) == .int(0))
        #expect(try Aggregation.apply(.avg, to: .many([.int(1), .int(2)])) == .double(1.5))
        #expect(try Aggregation.apply(.avg, to: .many([d("1"), d("2"), .int(0)])) == d("1"))
        #expect(try Aggregation.apply(.avg, to: .many([.null])) == .null)
        #expect(try Aggregation.apply(.count, to: .one(.null)) == .int(0))
        #expect(try Aggregation.apply(.max, to: .many([.null, .int(2), .double(2.5), .null])) == .double(2.5))
    }

    @Test func inAndBetween() throws {
        try check([
            ("name IN {'Café', 'x'}", true), ("name IN {'x'}", false), ("name IN {}", false), ("count IN {1, 5}", true),
            ("name IN[cd] {'CAFE'}", true), ("'af' IN name", true), ("'AF' IN name", false), ("'AF' IN[c] name", true),
            ("count IN 5", true),
            ("count BETWEEN {5, 10}", true), ("count BETWEEN {1, 5}", true), ("count BETWEEN {6, 10}", false),
            ("count BETWEEN {10, 1}", false), ("name BETWEEN {'A', 'D'}", true), ("name BETWEEN {1, 10}", false),
            ("count BETWEEN {1, list.limit}", true), ("count BETWEEN {list.limit, 20}", false),
            ("items.amount BETWEEN {6, 8}", true), ("ALL items.price BETWEEN {0.5, 2.25}", true),
            ("name IN items.tag", false), ("'blue' IN items.tag", true), ("'Blue' IN[c] items.tag", true),
        ])
        // Long lists go through a hashed index; the answers must not change.
        let integers = Array(0..<20)
        #expect(try holds("count IN %@", integers))
        #expect(try holds("ratio IN %@", integers) == false)
        #expect(try holds("price IN %@", integers) == false)
        #expect(try holds("name IN %@", integers) == false)
        #expect(try holds("count IN %@", integers.map { Double($0) }))
        #expect(try holds("5.0 IN %@", integers))
        let names = (0..<12).map { "name\($0)" } + ["CAFE"]
        #expect(try holds("name IN[cd] %@", names))
        #expect(try holds("name IN %@", names) == false)
        #expect(try holds("count IN %@", names) == false)
        #expect(try holds("nfd IN %@", (0..<12).map { "x\($0)" } + ["Café"]))
    }

    @Test func stringOperatorsAndOptions() throws {
        try check([
            ("name == 'CAFE'", false), ("name ==[c] 'CAFÉ'", true), ("name ==[c] 'CAFE'", false),
            ("name ==[d] 'Cafe'", true), ("name ==[cd] 'CAFE'", true), ("nfd ==[cd] 'cafe'", true),
            // Canonically equivalent spellings are equal; [n] compares the bytes of the NFC
            // forms (the bytes as given for text already in NFC), so it agrees with an index.
            ("nfd == 'Café'", true), ("name ==[n] 'Café'", true), ("nfd ==[n] 'Café'", true),
            ("nfd ==[n] 'Cafe'", false), ("nfd BEGINSWITH[n] 'Caf'", true), ("nfd BEGINSWITH[n] 'Cafe'", false),
            ("name ==[cn] 'café'", false),  // [n] supersedes [c]
            ("city ==[c] 'STRASSE'", true), ("city ==[cd] 'strasse'", true),
            ("name BEGINSWITH 'Ca'", true), ("name BEGINSWITH 'ca'", false), ("name BEGINSWITH[cd] 'CA'", true),
            ("name ENDSWITH 'é'", true), ("name ENDSWITH 'e'", false), ("name ENDSWITH[cd] 'E'", true),
            ("nfd ENDSWITH 'é'", true), ("name ENDSWITH[n] 'é'", true),
            ("name CONTAINS 'af'", true), ("name CONTAINS 'AF'", false), ("name CONTAINS[cd] 'AFE'", true),
            ("name CONTAINS[n] 'fé'", true), ("name CONTAINS[n] 'x'", false), ("code CONTAINS[n] '23'", true),
            ("name BEGINSWITH ''", true), ("name ENDSWITH ''", true), ("name CONTAINS ''", true),
            ("name BEGINSWITH list.name", false), ("list.name BEGINSWITH 'H'", true),
            ("name CONTAINS {'x', 'af'}", true),
            ("count BEGINSWITH '5'", false), ("count ENDSWITH '5'", false), ("count CONTAINS '5'", false),
            ("count LIKE '*'", false), ("count MATCHES '.*'", false), ("nothing CONTAINS 'a'", false),
            ("name CONTAINS 5", false), ("name < 'cafe'", true), ("name <[c] 'cafe'", false),
        ])
    }

    @Test func like() throws {
        try check([
            ("name LIKE 'C*'", true), ("name LIKE 'C?f?'", true), ("name LIKE 'c*'", false),
            ("name LIKE[c] 'c*'", true), ("name LIKE[cd] 'cafe'", true), ("name LIKE '*'", true),
            ("name LIKE 'Caf'", false), ("name LIKE '*f*'", true), ("name LIKE '**é'", true),
            ("nfd LIKE 'Caf?'", true), ("name LIKE '?????'", false),
            ("stars LIKE 'a\\*b'", true), ("stars LIKE 'a\\\\*b'", true), ("name LIKE 'C\\*'", false),
            ("stars LIKE '*\\*?'", true), ("code LIKE '1?3'", true), ("code LIKE '1*2*3'", true),
        ])
        let cases: [(String, String, Bool)] = [
            ("mississippi", "*sip*", true), ("mississippi", "m*iss*ppi", true), ("mississippi", "m*x*", false),
            ("mississippi", "*ss*ss*", true), ("mississippi", "*ss*ss*ss*", false), ("", "*", true),
            ("", "?", false), ("", "", true), ("a", "", false), ("abc", "a*c", true), ("abc", "a*b", false),
            ("a\\", "a\\", true),
        ]
        for (subject, pattern, expected) in cases {
            #expect(LikePattern(pattern).matches(subject) == expected, "\(subject) LIKE \(pattern)")
        }
    }

    @Test func matches() throws {
        try check([
            ("name MATCHES 'C.f.'", true), ("name MATCHES 'C'", false), ("name MATCHES 'Ca|Café'", true),
            ("name MATCHES 'af'", false), ("name MATCHES[c] 'caf.'", true), ("name MATCHES[cd] 'CAFE'", true),
            ("name MATCHES[d] 'Cafe'", true), ("name MATCHES[d] 'cafe'", false),
            ("code MATCHES '\\d+'", true), ("code MATCHES '\\D+'", false), ("code MATCHES[c] '\\D+'", false),
            ("code MATCHES '\\\\d{3}'", true), ("name MATCHES pattern", true), ("code MATCHES pattern", false),
            ("code MATCHES {'x', '1.*'}", true),
        ])
        let message = invalidFetchMessage { _ = try CompiledPredicate(try FetchPredicate(format: "name MATCHES '('")) }
        #expect(message?.contains("not a valid regular expression") == true)
        let dynamic = invalidFetchMessage { _ = try self.holds("name MATCHES badPattern") }
        #expect(dynamic?.contains("not a valid regular expression") == true)
    }

    @Test func evaluatorIsReusedAcrossObjects() throws {
        let objects = (0..<200).map { (i: Int) -> TestObject in
            let s = i % 2 == 0 ? "Even\(i)" : "odd"
            let p = i % 3 == 0 ? "E.*" : "o.*"
            return TestObject(id: Int64(i), ["n": .value(.int(Int64(i))), "s": .value(.string(s)), "p": .value(.string(p))])
        }
        let compiled = try CompiledPredicate(FetchPredicate(format: "n BETWEEN {10, 99} AND s MATCHES p AND s LIKE[c] 'even*'"))
        let evaluator = PredicateEvaluator(compiled)
        let count = try objects.filter { try evaluator.evaluate($0) }.count
        // Even, divisible by 3, 10...99: multiples of 6 from 12 to 96.
        #expect(count == 15)
        #expect(compiled.predicate.description == "n BETWEEN {10, 99} AND s MATCHES p AND s LIKE[c] \"even*\"")
        let sendable: any Sendable = compiled
        _ = sendable
    }

    @Test func malformedTreesAndSubjectErrors() throws {
        let badBetween = cmp(kp("count"), .between, .list([c(.int(1)), c(.int(2)), c(.int(3))]))
        #expect(invalidFetchMessage { _ = try CompiledPredicate(badBetween) }?.contains("BETWEEN needs a list of two bounds") == true)
        #expect(throws: TestObject.UnknownKey.self) { try self.holds("missing == 1") }
        // Short-circuiting: an unknown key after a decided OR is never read.
        #expect(try holds("count == 5 OR missing == 1"))
    }

    @Test func builderPredicatesEvaluate() throws {
        #expect(try (PropertyPath("count") > 4 && PropertyPath("name").beginsWith("ca", options: [.caseInsensitive])).evaluate(object))
        #expect(try (PropertyPath.all("items.price") > 0.25).evaluate(object))
        #expect(try (PropertyPath("items").count == 3).evaluate(object))
        #expect(try (PropertyPath("items.amount").sum >= 10).evaluate(object))
        #expect(try (PropertyPath("nothing") == nil).evaluate(object))
        #expect(try !(PropertyPath("count").in([1, 2]) || PropertyPath("ratio").between(3, 4)).evaluate(object))
    }
}
