import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// A fetch type-checks its predicate and sorts against the model (decision 25): every pair of
/// attribute type, constant kind and operator, directly, through a to-one, through a to-many and
/// under each aggregate, must throw `invalidFetch` exactly when the pair cannot compare (the spec
/// below, written independently of the checker), naming the key path and both types; a well-typed
/// pair must never throw.
@Suite struct FetchTypeCheckTests {
    static let types: [AttributeType] = AttributeType.allCases

    static func model() throws -> Model {
        try Model {
            Entity("Holder") {
                AttributeDescription("label", .string)
                RelationshipDescription("parts", toMany: "Part", inverse: "holder")
                RelationshipDescription("main", toOne: "Part", inverse: "mainOf")
                DerivedAttributeDescription("partCount", .int64, "parts.@count")
            }
            Entity("Part") {
                for t in AttributeType.allCases { AttributeDescription("a_\(t.rawValue)", t, optional: true) }
                AttributeDescription("note", .string, optional: true, transient: true)
                RelationshipDescription("holder", toOne: "Holder", inverse: "parts")
                RelationshipDescription("mainOf", toMany: "Holder", inverse: "main")
                DerivedAttributeDescription("folded", .string, "canonical:(a_string)", optional: true)
                FetchIndex("a_string")
                FetchIndex("a_int64")
            }
        }
    }

    /// The kinds values compare within.
    enum Kind: Equatable { case bool, number, string, date, uuid, binary, null }

    static func kind(_ t: AttributeType) -> Kind {
        switch t {
        case .bool: return .bool
        case .int16, .int32, .int64, .double, .decimal: return .number
        case .string: return .string
        case .date: return .date
        case .uuid: return .uuid
        case .binary: return .binary
        }
    }

    static let constants: [(StoredValue, Kind, String)] = [
        (.bool(true), .bool, "bool"), (.int(5), .number, "integer"), (.double(2.5), .number, "double"),
        (.decimal(Decimal(string: "1.25")!), .number, "decimal"), (.string("x"), .string, "string"),
        (.date(Date(timeIntervalSinceReferenceDate: 5)), .date, "date"), (.uuid(UUID()), .uuid, "UUID"),
        (.binary([1, 2]), .binary, "binary"), (.null, .null, "nil"),
    ]

    static let stringOperators: [ComparisonOperator] = [.beginsWith, .endsWith, .contains, .like, .matches]
    static let orderOperators: [ComparisonOperator] = [.less, .lessOrEqual, .greater, .greaterOrEqual, .between]

    /// The spec: whether `lhs op rhs` compares.
    static func compares(_ lhs: Kind, _ op: ComparisonOperator, _ rhs: Kind) -> Bool {
        if stringOperators.contains(op) { return lhs == .string && rhs == .string }
        if lhs == .null || rhs == .null { return !orderOperators.contains(op) }
        return lhs == rhs
    }

    static func predicate(_ lhs: FetchExpression, _ op: ComparisonOperator, _ rhs: StoredValue,
                          quantifier: Quantifier = .direct) -> FetchPredicate {
        let right: FetchExpression
        switch op {
        case .in: right = .list([.constant(rhs), .constant(rhs)])
        case .between: right = .list([.constant(rhs), .constant(rhs)])
        case .like: right = .constant(rhs.stringValue.map { .string($0 + "*") } ?? rhs)
        default: right = .constant(rhs)
        }
        return .comparison(Comparison(lhs, op, right, quantifier: quantifier))
    }

    /// The `invalidFetch` message of fetching `request` (nil: none). `fetch` runs a request
    /// through the plan cache, as its shape's prepared fetch with the constants as values
    /// (prepared the first time, found the second): its errors must be word for word those of
    /// planning with the constants, and never name a shape's `$n`.
    static func fetchMessage(_ store: RecordStore, _ request: FetchRequest,
                             sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        let message = invalidFetchMessage { _ = try store.read { try $0.fetch(request) } }
        let again = invalidFetchMessage { _ = try store.read { try $0.fetchCount(request) } }
        let direct = invalidFetchMessage { _ = try store.read { r in _ = try r.plannedFetchKeys(request, try r.entity(request.entity)) } }
        #expect(message == direct && again == direct,
                "\(request.predicate.map { "\($0)" } ?? ""): through the cache '\(message ?? "")', again '\(again ?? "")', with the constants '\(direct ?? "")'",
                sourceLocation: sourceLocation)
        return message
    }

    /// Runs the fetch and checks it against the spec; returns the number of cases.
    static func expect(_ store: RecordStore, _ entity: String, _ p: FetchPredicate, compares: Bool, naming: [String],
                       sourceLocation: SourceLocation = #_sourceLocation) throws {
        let message = fetchMessage(store, FetchRequest(entity, predicate: p), sourceLocation: sourceLocation)
        if compares {
            #expect(message == nil, "\(p): \(message ?? "")", sourceLocation: sourceLocation)
        } else if let message {
            for word in naming {
                #expect(message.contains(word), "\(p): '\(message)' does not name \(word)", sourceLocation: sourceLocation)
            }
        } else {
            Issue.record("\(p) is ill-typed but fetched without an error", sourceLocation: sourceLocation)
        }
    }

    static func populated() throws -> RecordStore {
        let store = try makeStore(try model())
        try store.write { tx in
            let h = try tx.insert("Holder", ["label": "h"])
            var values: [String: any ValueConvertible] = ["holder": h]
            values["a_string"] = "xa"
            values["a_int64"] = 5
            let part = try tx.insert("Part", values)
            try tx.update(h, ["main": part])
        }
        return store
    }

    @Test func everyAttributeTypeAgainstEveryConstantAndOperator() throws {
        let store = try Self.populated()
        let operators: [ComparisonOperator] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual,
                                               .in, .between] + Self.stringOperators
        var cases = 0
        for t in Self.types {
            for (constant, constantKind, constantName) in Self.constants {
                for op in operators {
                    if op == .matches || op == .like, constantKind == .null { continue }  // no pattern at all
                    let ok = Self.compares(Self.kind(t), op, constantKind)
                    let naming = ok ? [] : ["a_\(t.rawValue)"] + (constantKind == .null || Self.stringOperators.contains(op) ? [] : [t.rawValue, constantName])
                    // The attribute itself, through a to-one, through a to-many (ANY and ALL).
                    let forms: [(String, FetchExpression, Quantifier)] = [
                        ("Part", .keyPath(["a_\(t.rawValue)"]), .direct),
                        ("Holder", .keyPath(["main", "a_\(t.rawValue)"]), .direct),
                        ("Holder", .keyPath(["parts", "a_\(t.rawValue)"]), .any),
                        ("Holder", .keyPath(["parts", "a_\(t.rawValue)"]), .all),
                    ]
                    for (entity, lhs, quantifier) in forms {
                        try Self.expect(store, entity, Self.predicate(lhs, op, constant, quantifier: quantifier), compares: ok, naming: naming)
                        cases += 1
                    }
                }
            }
        }
        #expect(cases == 10 * 9 * 13 * 4 - 10 * 2 * 4)
    }

    @Test func aggregatesHaveTheTypeOfTheirResult() throws {
        let store = try Self.populated()
        for t in Self.types {
            for function in [AggregateFunction.count, .sum, .avg, .min, .max] {
                let path = ["parts", "a_\(t.rawValue)"]
                let numeric = Self.kind(t) == .number
                for (constant, constantKind, _) in Self.constants {
                    for op in [ComparisonOperator.equal, .greater, .beginsWith] {
                        let resultKind: Kind? = function == .count ? .number
                            : (function == .sum || function == .avg ? (numeric ? .number : nil) : Self.kind(t))
                        let ok = resultKind.map { Self.compares($0, op, constantKind) } ?? false
                        try Self.expect(store, "Holder", Self.predicate(.aggregate(function, path), op, constant),
                                        compares: ok, naming: ok ? [] : ["parts.a_\(t.rawValue)"])
                    }
                }
            }
        }
        // An aggregate needs a to-many key path.
        for p in ["main.a_int64.@sum > 1", "label.@count > 1", "@count > 1"] {
            let message = Self.fetchMessage(store, FetchRequest("Holder", predicate: try FetchPredicate(format: p)))
            #expect(message?.contains("to-many") == true, "\(p): \(String(describing: message))")
        }
    }

    @Test func objectsCompareWithObjectsOfTheirEntityAndWithIntegers() throws {
        let store = try Self.populated()
        let cases: [(String, String, Bool)] = [
            ("Part", "holder == 1", true), ("Part", "holder == nil", true), ("Part", "holder IN {1, 2}", true),
            ("Part", "holder > 0", true), ("Part", "holder == 1.5", false), ("Part", "holder == 'x'", false),
            ("Part", "holder BEGINSWITH 'x'", false), ("Holder", "main == parts", true), ("Holder", "SELF == main", false),
            ("Holder", "SELF IN parts.holder", true), ("Holder", "parts == 1", true), ("Holder", "ANY parts == 'x'", false),
            ("Part", "holder == mainOf", true), ("Part", "holder == holder.main", false), ("Part", "holder.main == SELF", true), ("Holder", "parts.@count == main.holder.partCount", true),
        ]
        for (entity, format, ok) in cases {
            try Self.expect(store, entity, try FetchPredicate(format: format), compares: ok, naming: [])
        }
    }

    @Test func listsBoundsKeyPathsAndContainment() throws {
        let store = try Self.populated()
        let cases: [(String, Bool)] = [
            ("a_int64 IN {1, 2.5, nil}", true), ("a_int64 IN {1, 'x'}", false), ("a_string IN {'a', nil}", true),
            ("a_string IN {'a', 1}", false), ("'x' IN a_string", true), ("5 IN a_string", false), ("a_string IN a_string", true),
            ("a_int64 BETWEEN {1, 2.5}", true), ("a_int64 BETWEEN {1, 'z'}", false), ("a_string BETWEEN {'a', 'z'}", true),
            ("a_int64 < a_double", true), ("a_int64 < a_string", false), ("a_date > a_double", false),
            ("a_string BEGINSWITH folded", true), ("a_int64 == holder.partCount", true), ("a_bool == 1", false),
            ("a_string ==[cd] 'x'", true), ("a_int64 ==[c] 5", true), ("a_int64 < nil", false), ("a_string LIKE 5", false),
            ("holder.label MATCHES 'h.*'", true), ("holder.parts.a_string CONTAINS 'a'", true),
        ]
        for (format, ok) in cases {
            try Self.expect(store, "Part", try FetchPredicate(format: format), compares: ok, naming: [])
        }
        let bounds = FetchPredicate.comparison(Comparison(.keyPath(["a_int64"]), .between, .list([.constant(.int(1))])))
        #expect(Self.fetchMessage(store, FetchRequest("Part", predicate: bounds))?
            .contains("BETWEEN needs a list of two bounds") == true)
    }

    @Test func keyPathsAndSortsAreChecked() throws {
        let store = try Self.populated()
        let messages: [(FetchRequest, String)] = [
            (FetchRequest("Part", predicate: try FetchPredicate(format: "nothing == 1")), "no property 'nothing'"),
            (FetchRequest("Part", predicate: try FetchPredicate(format: "note == 'x'")), "transient"),
            (FetchRequest("Part", predicate: try FetchPredicate(format: "a_string.x == 'x'")), "not a relationship"),
            (FetchRequest("Part", predicate: try FetchPredicate(format: "holder.nothing == 1")), "in 'holder.nothing'"),
            (FetchRequest("Part", sortedBy: [FetchSortDescriptor("note")]), "transient"),
            (FetchRequest("Holder", sortedBy: [FetchSortDescriptor("parts.a_int64")]), "to-many"),
            (FetchRequest("Holder", sortedBy: [FetchSortDescriptor("parts")]), "to-many"),
        ]
        for (request, expected) in messages {
            let message = Self.fetchMessage(store, request)
            #expect(message?.contains(expected) == true, "\(String(describing: message)) should say \(expected)")
        }
        for sort in ["main.a_string", "holder", "label", "main"] {
            let entity = sort == "holder" ? "Part" : "Holder"
            #expect(throws: Never.self) { _ = try store.read { try $0.fetch(FetchRequest(entity, sortedBy: [FetchSortDescriptor(sort)])) } }
        }
    }
}
