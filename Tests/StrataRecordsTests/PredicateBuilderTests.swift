import Foundation
import Testing
@testable import StrataRecords

@Suite struct PredicateBuilderTests {
    /// Each built predicate must equal what its format string parses to.
    @Test func builtEqualsParsed() throws {
        let date = Date(timeIntervalSinceReferenceDate: 5000)
        let uuid = UUID()
        let cases: [(Predicate, String, [(any PredicateArgument)?])] = [
            (Key("itemCount") > 5 && Key("searchName").beginsWith("ab", options: [.caseInsensitive, .diacriticInsensitive]),
             "itemCount > 5 AND searchName BEGINSWITH[cd] 'ab'", []),
            (Key("list.name") == "Home", "list.name == 'Home'", []),
            (Key("a") != 2.5, "a != 2.5", []),
            (Key("a") < 1, "a < 1", []),
            (Key("a") <= 1, "a <= 1", []),
            (Key("a") > Int64(1), "a > 1", []),
            (Key("a") >= Decimal(string: "1.5")!, "a >= CAST('1.5', 'NSDecimalNumber')", []),
            (Key("when") < date, "when < %@", [date]),
            (Key("id") == uuid, "id == %@", [uuid]),
            (Key("bytes") == [UInt8]([1, 2]), "bytes == CAST('0102', 'NSData')", []),
            (Key("a") == nil, "a == nil", []),
            (Key("a") != nil, "a != nil", []),
            (Key("a") == Key("b.c"), "a == b.c", []),
            (Key("a") == true, "a == YES", []),
            (Key("tag").in(["a", "b"]), "tag IN {'a', 'b'}", []),
            (Key("tag").in([1, "b", Value.null]), "tag IN {1, 'b', nil}", []),
            (Key("tag").in(["x"], options: .caseInsensitive), "tag IN[c] {'x'}", []),
            (Key("tag").in(Key("list.tags")), "tag IN list.tags", []),
            (Key("amount").between(1, 10), "amount BETWEEN {1, 10}", []),
            (Key("amount").between(0.5, Key("limit")), "amount BETWEEN {0.5, limit}", []),
            (Key("items").count > 3, "items.@count > 3", []),
            (Key("items.amount").sum >= 100, "items.amount.@sum >= 100", []),
            (Key("items.amount").average == 2, "items.amount.@avg == 2", []),
            (Key("items.amount").minimum == 2, "items.amount.@min == 2", []),
            (Key("items.amount").maximum == 2, "items.amount.@max == 2", []),
            (Key("items.@count") == 0, "items.@count == 0", []),
            (.any(Key("items.amount")) > 5, "ANY items.amount > 5", []),
            (Key.any("items.amount") > 5, "ANY items.amount > 5", []),
            (Key.all("items.amount") > 5, "ALL items.amount > 5", []),
            (Key.none("items.name").contains("x", options: .caseInsensitive), "NONE items.name CONTAINS[c] 'x'", []),
            (Key("name").equals("x", options: [.caseInsensitive, .diacriticInsensitive]), "name ==[cd] 'x'", []),
            (Key("name").endsWith("x"), "name ENDSWITH 'x'", []),
            (Key("name").like("a*?", options: .caseInsensitive), "name LIKE[c] 'a*?'", []),
            (Key("name").matches("\\d+"), "name MATCHES '\\\\d+'", []),
            (Key("name").compared(.beginsWith, to: "n", options: .normalized), "name BEGINSWITH[n] 'n'", []),
            (!(Key("a") == 1), "NOT a == 1", []),
            (Key("a") == 1 || Key("b") == 2, "a == 1 OR b == 2", []),
            (Key("a") == 1 && Key("b") == 2 && Key("c") == 3, "a == 1 AND b == 2 AND c == 3", []),
            (Key("a") == 1 || Key("b") == 2 || Key("c") == 3, "a == 1 OR b == 2 OR c == 3", []),
            (Key("a") == 1 && (Key("b") == 2 || Key("c") == 3), "a == 1 AND (b == 2 OR c == 3)", []),
            (Key("a") == 1 || Key("b") == 2 && Key("c") == 3, "a == 1 OR b == 2 AND c == 3", []),
            (Key("a") == 1 && (Key("b") == 2 && Key("c") == 3), "a == 1 AND (b == 2 AND c == 3)", []),
            (Key("") == 4, "SELF == 4", []),
            (Key(path: ["odd.name"]) == 1, "%K == 1", [Key(path: ["odd.name"])]),
        ]
        for (built, format, arguments) in cases {
            #expect(try built == Predicate(format: format, argumentArray: arguments), "\(format) vs \(built)")
        }
    }

    @Test func keysDescribeThemselves() {
        #expect(Key("items.amount").sum.description == "items.amount.@sum")
        #expect(Key.none("tags.in").description == "NONE tags.#in")
        #expect(Key("").description == "SELF")
    }
}
