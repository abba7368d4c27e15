import Foundation
import Testing
@testable import StrataRecords

@Suite struct PredicateBuilderTests {
    /// Each built predicate must equal what its format string parses to.
    @Test func builtEqualsParsed() throws {
        let date = Date(timeIntervalSinceReferenceDate: 5000)
        let uuid = UUID()
        let cases: [(FetchPredicate, String, [(any PredicateArgument)?])] = [
            (PropertyPath("itemCount") > 5 && PropertyPath("searchName").beginsWith("ab", options: [.caseInsensitive, .diacriticInsensitive]),
             "itemCount > 5 AND searchName BEGINSWITH[cd] 'ab'", []),
            (PropertyPath("list.name") == "Home", "list.name == 'Home'", []),
            (PropertyPath("a") != 2.5, "a != 2.5", []),
            (PropertyPath("a") < 1, "a < 1", []),
            (PropertyPath("a") <= 1, "a <= 1", []),
            (PropertyPath("a") > Int64(1), "a > 1", []),
            (PropertyPath("a") >= Decimal(string: "1.5")!, "a >= CAST('1.5', 'NSDecimalNumber')", []),
            (PropertyPath("when") < date, "when < %@", [date]),
            (PropertyPath("id") == uuid, "id == %@", [uuid]),
            (PropertyPath("bytes") == [UInt8]([1, 2]), "bytes == CAST('0102', 'NSData')", []),
            (PropertyPath("a") == nil, "a == nil", []),
            (PropertyPath("a") != nil, "a != nil", []),
            (PropertyPath("a") == PropertyPath("b.c"), "a == b.c", []),
            (PropertyPath("a") == true, "a == YES", []),
            (PropertyPath("tag").in(["a", "b"]), "tag IN {'a', 'b'}", []),
            (PropertyPath("tag").in([1, "b", StoredValue.null]), "tag IN {1, 'b', nil}", []),
            (PropertyPath("tag").in(["x"], options: .caseInsensitive), "tag IN[c] {'x'}", []),
            (PropertyPath("tag").in(PropertyPath("list.tags")), "tag IN list.tags", []),
            (PropertyPath("amount").between(1, 10), "amount BETWEEN {1, 10}", []),
            (PropertyPath("amount").between(0.5, PropertyPath("limit")), "amount BETWEEN {0.5, limit}", []),
            (PropertyPath("items").count > 3, "items.@count > 3", []),
            (PropertyPath("items.amount").sum >= 100, "items.amount.@sum >= 100", []),
            (PropertyPath("items.amount").average == 2, "items.amount.@avg == 2", []),
            (PropertyPath("items.amount").minimum == 2, "items.amount.@min == 2", []),
            (PropertyPath("items.amount").maximum == 2, "items.amount.@max == 2", []),
            (PropertyPath("items.@count") == 0, "items.@count == 0", []),
            (.any(PropertyPath("items.amount")) > 5, "ANY items.amount > 5", []),
            (PropertyPath.any("items.amount") > 5, "ANY items.amount > 5", []),
            (PropertyPath.all("items.amount") > 5, "ALL items.amount > 5", []),
            (PropertyPath.none("items.name").contains("x", options: .caseInsensitive), "NONE items.name CONTAINS[c] 'x'", []),
            (PropertyPath("name").equals("x", options: [.caseInsensitive, .diacriticInsensitive]), "name ==[cd] 'x'", []),
            (PropertyPath("name").endsWith("x"), "name ENDSWITH 'x'", []),
            (PropertyPath("name").like("a*?", options: .caseInsensitive), "name LIKE[c] 'a*?'", []),
            (PropertyPath("name").matches("\\d+"), "name MATCHES '\\\\d+'", []),
            (PropertyPath("name").compared(.beginsWith, to: "n", options: .normalized), "name BEGINSWITH[n] 'n'", []),
            (!(PropertyPath("a") == 1), "NOT a == 1", []),
            (PropertyPath("a") == 1 || PropertyPath("b") == 2, "a == 1 OR b == 2", []),
            (PropertyPath("a") == 1 && PropertyPath("b") == 2 && PropertyPath("c") == 3, "a == 1 AND b == 2 AND c == 3", []),
            (PropertyPath("a") == 1 || PropertyPath("b") == 2 || PropertyPath("c") == 3, "a == 1 OR b == 2 OR c == 3", []),
            (PropertyPath("a") == 1 && (PropertyPath("b") == 2 || PropertyPath("c") == 3), "a == 1 AND (b == 2 OR c == 3)", []),
            (PropertyPath("a") == 1 || PropertyPath("b") == 2 && PropertyPath("c") == 3, "a == 1 OR b == 2 AND c == 3", []),
            (PropertyPath("a") == 1 && (PropertyPath("b") == 2 && PropertyPath("c") == 3), "a == 1 AND (b == 2 AND c == 3)", []),
            (PropertyPath("") == 4, "SELF == 4", []),
            (PropertyPath(path: ["odd.name"]) == 1, "%K == 1", [PropertyPath(path: ["odd.name"])]),
        ]
        for (built, format, arguments) in cases {
            #expect(try built == FetchPredicate(format: format, argumentArray: arguments), "\(format) vs \(built)")
        }
    }

    @Test func keysDescribeThemselves() {
        #expect(PropertyPath("items.amount").sum.description == "items.amount.@sum")
        #expect(PropertyPath.none("tags.in").description == "NONE tags.#in")
        #expect(PropertyPath("").description == "SELF")
    }
}
