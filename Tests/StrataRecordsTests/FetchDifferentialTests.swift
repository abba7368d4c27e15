import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// A fetch gives the same answer whichever plan runs: seeded random predicates over seeded random
/// rows, each fetched through the planner (with its indexes) and as a scan (indexes turned off),
/// must return the same objects, and sorted fetches the same order (an index that gives the order
/// against a sort in memory).
///
/// The rows hold what makes key bytes and comparisons part ways: canonically equivalent
/// spellings (NFC, NFD, U+212B, Hangul jamo), case and diacritic variants, final sigma, empty
/// strings, NULs, strings and bytes around the index key's cut, ±0, integers past 2⁵³, decimals
/// of equal value, nils (NaN and ±∞ cannot be stored, docs/decisions.md 16: they appear as
/// predicate constants only). The predicates use every operator, option and attribute
/// type, key paths through a to-one, prefixes, ranges, `IN` lists, and `NOT`/`OR`/`AND`.
@Suite struct FetchDifferentialTests {
    static let seeds: [UInt64] = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init).map { [$0] }
        ?? [0xF37C_0001, 0xF37C_0002]

    @Test(arguments: seeds)
    func indexPlansAgreeWithScans(seed: UInt64) throws {
        var run = try FetchDifferentialRun(seed: seed)
        try run.populate(things: 200)
        try run.compare(fetches: 900, label: "after inserts")
        try run.comparePrefixes()
        try run.rewriteSpellings()
        try run.compare(fetches: 350, label: "after rewrites")
        // Enough of the fetches must have used an index, decided a term and given the order,
        // or the comparison proves nothing.
        #expect(run.indexed > 400, "seed \(seed): only \(run.indexed) fetches used an index")
        #expect(run.decided > 100, "seed \(seed): only \(run.decided) fetches had a decided term")
        #expect(run.ordered > 25, "seed \(seed): only \(run.ordered) fetches took their order from an index")
        #expect(run.prepared > 500, "seed \(seed): only \(run.prepared) fetches ran prepared")
        #expect(run.throughWords > 25, "seed \(seed): only \(run.throughWords) fetches used a word index")
        print("fetch differential, seed \(seed): \(run.fetches) fetches, \(run.indexed) through an index, \(run.decided) with a decided term, \(run.ordered) ordered by an index, \(run.prepared) also prepared, \(run.throughWords) through a word index")
    }
}

struct FetchDifferentialRun {
    static func model() throws -> Model {
        try Model {
            Entity("Owner") {
                AttributeDescription("name", .string)
                RelationshipDescription("things", toMany: "Thing", inverse: "owner")
                DerivedAttributeDescription("thingCount", .int64, "things.@count")
                FetchIndex("name")
            }
            Entity("Thing") {
                AttributeDescription("s", .string, optional: true)
                AttributeDescription("t", .string, default: "")
                AttributeDescription("i", .int64, optional: true)
                AttributeDescription("n", .int16, optional: true)
                AttributeDescription("d", .double, optional: true)
                AttributeDescription("dec", .decimal, optional: true)
                AttributeDescription("b", .bool, optional: true)
                AttributeDescription("when", .date, optional: true)
                AttributeDescription("u", .uuid, optional: true)
                AttributeDescription("bin", .binary, optional: true)
                RelationshipDescription("owner", toOne: "Owner", inverse: "things")
                DerivedAttributeDescription("folded", .string, "canonical:(s)", optional: true)
                DerivedAttributeDescription("lower", .string, "lowercase:(s)", optional: true)
                DerivedAttributeDescription("ownerName", .string, "owner.name", optional: true)
                FetchIndex("s")
                FetchIndex("t", "i")
                FetchIndex("i")
                FetchIndex("n")
                FetchIndex("d")
                FetchIndex("dec")
                FetchIndex("b")
                FetchIndex("when")
                FetchIndex("u")
                FetchIndex("bin")
                FetchIndex("owner")
                FetchIndex("folded")
                FetchIndex("lower")
                FetchIndex("ownerName")
                FullTextIndex("s")
                FullTextIndex("s", "t")
            }
        }
    }

    enum Kind { case string, int, int16, double, decimal, bool, date, uuid, binary, object }

    /// Key paths of Thing that predicates and sorts use, with the kind of their values.
    static let paths: [(String, Kind)] = [
        ("s", .string), ("t", .string), ("i", .int), ("n", .int16), ("d", .double), ("dec", .decimal),
        ("b", .bool), ("when", .date), ("u", .uuid), ("bin", .binary), ("folded", .string), ("lower", .string),
        ("ownerName", .string), ("owner.name", .string), ("owner.thingCount", .int), ("owner", .object),
    ]

    static let longX = String(repeating: "x", count: KeyEncoding.maxValueBytes - 4)
    static let strings: [String] = [
        "", "a", "A", "b", "caf\u{E9}", "cafe\u{301}", "CAF\u{C9}", "Cafe", "cafe", "caf", "caf\u{E9}s", "e\u{301}", "\u{E9}",
        "q\u{307}", "q", "q\u{307}\u{323}", "q\u{323}\u{307}", "\u{3A3}", "\u{39F}\u{394}\u{39F}\u{3A3}", "\u{3BF}\u{3B4}\u{3BF}\u{3C2}",
        "\u{3BF}\u{3B4}\u{3BF}\u{3C3}", "Stra\u{DF}e", "STRASSE", "strasse", "\u{FB01}le", "file", "\u{130}stanbul", "istanbul",
        "\u{131}", "\u{212B}", "\u{C5}", "A\u{30A}", "\u{AC00}", "\u{1100}\u{1161}", "\u{AC01}", "\u{AC00}\u{11A8}",
        "a\u{0}b", "\u{0}", "\u{0}\u{0}", "z", "Zo\u{EB}", "\u{65E5}\u{672C}", "\u{1F600}", "*", "?", "a*b",
        "\r\n", "a\r\nb", "\u{1F1E9}\u{1F1EA}", "q\u{307}x", "\u{1100}\u{1161}\u{11A8}",
    ]
    static let doubles: [Double] = [.nan, -.nan, 0, -0.0, 1, -1, 1.5, 2.5, 3, .infinity, -.infinity,
                                    9_007_199_254_740_992, 9_007_199_254_740_994, 1e300, -1e-300, 0.1]
    /// The doubles a row can hold: a store refuses NaN and the infinities.
    static let storedDoubles = doubles.filter(\.isFinite)
    static let integers: [Int64] = [0, 1, -1, 2, 3, 1_000, 9_007_199_254_740_992, 9_007_199_254_740_993, .max, .min, -5, 40_000]
    static let smallIntegers: [Int64] = [0, 1, -1, 3, 32_767, -32_768, 100]
    static let decimals: [Decimal] = ["0", "1.5", "-1.5", "3", "2.25", "100", "0.001", "12345678901234567890.5",
                                      "9007199254740993", "-0.5"].map { Decimal(string: $0)! }
        + [DecimalCoding.decode(sign: 0, exponent: UInt8(bitPattern: -2), mantissa: [150])!,
           DecimalCoding.decode(sign: 0, exponent: UInt8(bitPattern: -3), mantissa: [0xB8, 0x0B])!]  // 1.50, 3.000
    static let uuids = (1...4).map { UUID(uuidString: "00000000-0000-0000-0000-00000000000\($0)")! }
    static let binaries: [[UInt8]] = [[], [0], [0, 0], [1, 2, 3], [0xFF], [1, 0, 2],
                                      [UInt8](repeating: 0, count: 460), [UInt8](repeating: 0x41, count: 899) + [1],
                                      [UInt8](repeating: 0x41, count: 899) + [2], [UInt8](repeating: 0x41, count: 897)]

    let seed: UInt64
    var rng: SplitMix64
    let store: RecordStore
    var owners: [ObjectID] = []
    var things: [ObjectID] = []
    /// Every string the rows hold, for constants that hit.
    var stored: [String] = []
    var fetches = 0
    var indexed = 0
    /// Fetches planned onto a word index.
    var throughWords = 0
    var decided = 0
    var ordered = 0
    var prepared = 0
    var mismatches = 0

    init(seed: UInt64) throws {
        self.seed = seed
        rng = SplitMix64(seed: seed)
        store = try makeStore(try Self.model())
    }

    mutating func pick<T>(_ xs: [T]) -> T { xs[Int(rng.next() % UInt64(xs.count))] }
    mutating func chance(_ p: Double) -> Bool { rng.unit() < p }
    mutating func below(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }

    /// A long string around the key's cut: runs of one character (NULs are escaped to two
    /// bytes, "é" has two bytes in NFC and three in NFD) and a varying tail.
    mutating func longString() -> String {
        let unit = pick(["x", "\u{E9}", "e\u{301}", "\u{0}", "ab"])
        let bytes = unit == "x" ? 1 : (unit == "ab" ? 2 : 2)
        let count = (KeyEncoding.maxValueBytes - 12) / bytes + below(16)
        return String(repeating: unit, count: count) + pick(["", "a", "b", "\u{E9}", "e\u{301}", "\u{0}", "zz"])
    }

    mutating func string() -> String {
        switch below(14) {
        case 0..<9: return pick(Self.strings)
        case 9: return pick(Self.strings) + pick(Self.strings)
        case 10: return longString()
        case 11: return Self.longX + pick(["", "a", "b", "ab"])
        default: return variant(of: stored.isEmpty ? pick(Self.strings) : pick(stored))
        }
    }

    /// Another spelling of `s`: NFC or NFD, other case, fewer marks, a prefix.
    mutating func variant(of s: String) -> String {
        switch below(7) {
        case 0: return s.decomposedStringWithCanonicalMapping
        case 1: return s.precomposedStringWithCanonicalMapping
        case 2: return s.uppercased()
        case 3: return s.lowercased()
        case 4: return TextFolding.canonical(s)
        case 5: return String(s.prefix(below(max(1, s.count))))
        default: return String(s.unicodeScalars.prefix(below(max(1, s.unicodeScalars.count + 1))).map(Character.init))
        }
    }

    mutating func maybe(_ v: StoredValue) -> StoredValue { chance(0.1) ? .null : v }

    mutating func thingValues() -> [String: any ValueConvertible] {
        var v: [String: any ValueConvertible] = [
            "s": maybe(.string(string())), "t": string(), "i": maybe(.int(pick(Self.integers))),
            "n": maybe(.int(pick(Self.smallIntegers))), "d": maybe(.double(pick(Self.storedDoubles))),
            "dec": maybe(.decimal(pick(Self.decimals))), "b": maybe(.bool(chance(0.5))),
            "when": maybe(.date(Date(timeIntervalSinceReferenceDate: pick(Self.storedDoubles)))),
            "u": maybe(.uuid(pick(Self.uuids))), "bin": maybe(.binary(pick(Self.binaries))),
        ]
        if chance(0.85) { v["owner"] = pick(owners) }
        return v
    }

    mutating func populate(things count: Int) throws {
        var names = (0..<7).map { _ in pick(Self.strings) }
        names.append(names[0].decomposedStringWithCanonicalMapping)
        owners = try store.write { tx in try names.map { try tx.insert("Owner", ["name": $0]) } }
        stored += names
        var pending: [[String: any ValueConvertible]] = []
        for _ in 0..<count { pending.append(thingValues()) }
        things = try store.write { tx in try pending.map { try tx.insert("Thing", $0) } }
        for v in pending {
            for key in ["s", "t"] { if case .string(let s)? = (v[key]?.strataValue) { stored.append(s) } }
        }
        try expectConsistent(store, "seed \(seed)")
    }

    /// Rewrites strings into other spellings (NFC to NFD and back, case), doubles into -0 or
    /// +0 (and tries NaN, which must be refused and change nothing), deletes and inserts, fetching inside the transaction too (its index trees hold the
    /// pending changes), then commits.
    mutating func rewriteSpellings() throws {
        var run = self
        try store.write { tx in
            for _ in 0..<60 {
                let id = run.pick(run.things)
                switch run.below(5) {
                case 0, 1:
                    guard case .string(let s) = try tx.value("s", of: id) else { continue }
                    let other = run.variant(of: s)
                    try tx.update(id, ["s": other, "t": run.variant(of: other)])
                    run.stored.append(other)
                case 2:
                    let before = try tx.value("d", of: id)
                    #expect(throws: StrataError.self) { try tx.update(id, ["d": run.pick([Double.nan, -.nan, .infinity])]) }
                    #expect(try tx.value("d", of: id) == before, "seed \(run.seed): a refused update changed the row")
                    try tx.update(id, ["d": run.pick([-0.0, 0.0]), "when": Date(timeIntervalSinceReferenceDate: -0.0)])
                case 3:
                    try tx.delete(id)
                    run.things.removeAll { $0 == id }
                default:
                    run.things.append(try tx.insert("Thing", run.thingValues()))
                }
            }
            for _ in 0..<150 { try run.compareOne(in: tx, label: "inside a write") }
        }
        self = run
        try expectConsistent(store, "seed \(seed)")
    }

    mutating func compare(fetches: Int, label: String) throws {
        for _ in 0..<fetches {
            let request = randomRequest()
            try store.read { r in try compare(request, in: r, label: label) }
            if mismatches > 20 { return }
        }
    }

    /// Every run of leading scalars of some stored strings (ending inside a character, too)
    /// as a `BEGINSWITH` and `==` constant, without options, with `[n]` and with `[cd]`.
    mutating func comparePrefixes() throws {
        var values = Array(Set(stored.filter { $0.unicodeScalars.count <= 12 }))
        values.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for value in values.prefix(80) {
            let scalars = Array(value.unicodeScalars)
            for n in 0...scalars.count {
                var prefix = String.UnicodeScalarView()
                prefix.append(contentsOf: scalars.prefix(n))
                let path = pick(["s", "folded", "lower"])
                let options: StringOptions = pick([[], [.normalized], [.caseInsensitive, .diacriticInsensitive]])
                let op: ComparisonOperator = chance(0.75) ? .beginsWith : .equal
                let predicate = FetchPredicate.comparison(Comparison(.keyPath([path]), op, .constant(.string(String(prefix))), options: options))
                let request = FetchRequest("Thing", predicate: predicate, sortedBy: chance(0.3) ? [FetchSortDescriptor(path)] : [])
                try store.read { r in try compare(request, in: r, label: "prefixes") }
            }
        }
    }

    mutating func compareOne(in r: RecordReader, label: String) throws {
        try compare(randomRequest(), in: r, label: label)
    }

    /// Runs `request` with and without indexes and records any difference.
    mutating func compare(_ request: FetchRequest, in r: RecordReader, label: String) throws {
        let plan = try r.fetchPlanDescription(request)
        fetches += 1
        if plan.contains("index:") { indexed += 1 }
        if plan.contains("decides") { decided += 1 }
        if plan.hasPrefix("words:") { throughWords += 1 }
        if plan.contains("in order") { ordered += 1 }
        var scan = request
        scan.usesIndexes = false
        // `fetch` runs through the model's plan cache (the request's shape, prepared); the
        // planner with the constants themselves runs directly, and must agree too.
        let planned: [ObjectID], scanned: [ObjectID], direct: [ObjectID]
        do {
            planned = try r.fetch(request)
            scanned = try r.fetch(scan)
            direct = try r.plannedFetchKeys(request, try r.entity("Thing")).map(r.objectID)
            // With the rows the fetch read: the same keys, and each row the stored one.
            for q in [request, scan] {
                let (pks, rows) = try r.fetchPrimaryKeysAndRows(q)
                let keys = try r.fetch(q).map(\.primaryKey)
                if pks != keys || !(rows.isEmpty || rows.count == pks.count) {
                    mismatches += 1
                    Issue.record("seed \(seed), \(label): fetchPrimaryKeysAndRows gave \(pks.count) keys and \(rows.count) rows, fetch \(keys.count) keys for \(describe(q))")
                }
                if !q.usesIndexes && rows.isEmpty && !pks.isEmpty {
                    mismatches += 1
                    Issue.record("seed \(seed), \(label): a scan of every row kept no rows for \(describe(q))")
                }
                for (pk, row) in zip(pks, rows) where try r.storedRow(of: ObjectID(entity: "Thing", primaryKey: pk)) != row {
                    mismatches += 1
                    Issue.record("seed \(seed), \(label): the row kept for \(pk) is not the stored one for \(describe(q))")
                }
            }
        } catch {
            mismatches += 1
            Issue.record("seed \(seed), \(label): \(error) for \(describe(request)) [\(plan)]")
            return
        }
        let agree: Bool
        if !request.sortDescriptors.isEmpty {
            agree = planned == scanned && direct == scanned
        } else if request.limit == nil && request.offset == 0 {
            agree = planned.count == scanned.count && Set(planned) == Set(scanned) && direct.count == scanned.count && Set(direct) == Set(scanned)
        } else {
            // Without a sort, which page is returned is not specified: only that it is a page.
            var whole = scan
            whole.limit = nil
            whole.offset = 0
            let all = Set(try r.fetch(whole))
            agree = [planned, direct].allSatisfy { found in
                found.count == scanned.count && Set(found).count == found.count && Set(found).isSubset(of: all)
            }
        }
        // The cache's plan is the one planning with the constants makes (the same index,
        // hence the same page), unless a constant's key is inexact (see `FetchPlan.make`).
        let withConstants = FetchPlan.make(request, entity: try r.entity("Thing"), derivedAreCurrent: r.derivedAreCurrent).description
        if plan != withConstants && !(request.predicate.map(Self.hasInexactConstant) ?? false) {
            mismatches += 1
            Issue.record("seed \(seed), \(label): \(describe(request)): the cache runs [\(plan)], planning with the constants [\(withConstants)]")
        } else if plan == withConstants && planned != direct {
            mismatches += 1
            Issue.record("seed \(seed), \(label): \(describe(request)) [\(plan)]: one plan, two answers: \(planned.count) through the cache, \(direct.count) with the constants")
        }
        let counted = try r.fetchCount(request)
        if !agree || counted != planned.count {
            mismatches += 1
            let missing = Set(scanned).subtracting(planned).prefix(3), extra = Set(planned).subtracting(scanned).prefix(3)
            var rows: [String] = []
            for id in Array(missing) + Array(extra) { rows.append("\(id): \(try r.values(of: id).map { "\($0)" } ?? "gone")") }
            Issue.record("""
                seed \(seed), \(label): \(describe(request)) [\(plan)]: index plan \(planned.count) objects (with the constants: \(direct.count)), scan \(scanned.count), count \(counted); \
                missing \(Array(missing)), extra \(Array(extra)); order \(planned == scanned ? "same" : "differs") \(rows)
                """)
            return
        }
        try comparePrepared(request, in: r, planned: planned, scanned: scanned, label: label)
    }

    /// The same request with most constants made variables, prepared, and run (twice: the
    /// second run takes the checked kinds from the cache) with the constants as values: it must
    /// find what the planner found (the same order when sorted, the same set otherwise, a page
    /// of the scan's objects when paged without a sort).
    mutating func comparePrepared(_ request: FetchRequest, in r: RecordReader, planned: [ObjectID], scanned: [ObjectID],
                                  label: String) throws {
        var values: [String: StoredValue] = [:]
        var template = request
        template.predicate = request.predicate.map { abstracted($0, &values) }
        guard !values.isEmpty else { return }
        prepared += 1
        let fetch: PreparedFetch
        let first: [ObjectID], second: [ObjectID], counted: Int
        do {
            fetch = try store.prepare(template)
            first = try r.fetch(fetch, values)
            second = try r.fetch(fetch, values)
            counted = try r.fetchCount(fetch, values)
        } catch {
            mismatches += 1
            Issue.record("seed \(seed), \(label), prepared: \(error) for \(describe(template)) with \(values)")
            return
        }
        let agree: Bool
        if !request.sortDescriptors.isEmpty {
            agree = first == planned
        } else if request.limit == nil && request.offset == 0 {
            agree = first.count == planned.count && Set(first) == Set(planned)
        } else {
            var whole = request
            whole.limit = nil
            whole.offset = 0
            whole.usesIndexes = false
            let all = Set(try r.fetch(whole))
            agree = first.count == planned.count && Set(first).count == first.count && Set(first).isSubset(of: all)
        }
        if !agree || first != second || counted != first.count {
            mismatches += 1
            Issue.record("""
                seed \(seed), \(label), prepared: \(describe(template)) with \(values): \(first.count) objects \
                (again: \(second.count), count \(counted)), the planner found \(planned.count); order \(first == planned ? "same" : "differs")
                """)
        }
    }

    /// Whether a constant's key may be inexact: a string or binary near the key's cut (NULs
    /// escape to two bytes), NaN.
    static func hasInexactConstant(_ p: FetchPredicate) -> Bool {
        func inexact(_ x: FetchExpression) -> Bool {
            switch x {
            case .constant(.string(let s)): return s.utf8.count * 2 >= KeyEncoding.maxValueBytes
            case .constant(.binary(let b)): return b.count * 2 >= KeyEncoding.maxValueBytes
            case .constant(.double(let d)): return d.isNaN
            case .constant(.date(let d)): return d.timeIntervalSinceReferenceDate.isNaN
            case .list(let items): return items.contains(where: inexact)
            default: return false
            }
        }
        switch p {
        case .constant: return false
        case .comparison(let c): return inexact(c.lhs) || inexact(c.rhs)
        case .and(let ps), .or(let ps): return ps.contains(where: hasInexactConstant)
        case .not(let q): return hasInexactConstant(q)
        }
    }

    /// `p` with each constant (each element of a list too) made a variable `$v<n>` with
    /// probability 0.8, its value put in `values`.
    mutating func abstracted(_ p: FetchPredicate, _ values: inout [String: StoredValue]) -> FetchPredicate {
        func expression(_ x: FetchExpression, _ run: inout FetchDifferentialRun) -> FetchExpression {
            switch x {
            case .constant(let v) where run.chance(0.8):
                let name = "v\(values.count)"
                values[name] = v
                return .variable(name)
            case .list(let items): return .list(items.map { expression($0, &run) })
            default: return x
            }
        }
        switch p {
        case .constant: return p
        case .comparison(var c):
            c.rhs = expression(c.rhs, &self)
            return .comparison(c)
        case .and(let ps): return .and(ps.map { abstracted($0, &values) })
        case .or(let ps): return .or(ps.map { abstracted($0, &values) })
        case .not(let q): return .not(abstracted(q, &values))
        }
    }

    func describe(_ request: FetchRequest) -> String {
        var text = request.predicate.map { "\($0)" } ?? "all"
        if !request.sortDescriptors.isEmpty {
            text += " sorted by " + request.sortDescriptors.map { "\($0.keyPath)\($0.ascending ? "" : " desc")" }.joined(separator: ", ")
        }
        if let limit = request.limit { text += " limit \(limit)" }
        if request.offset > 0 { text += " offset \(request.offset)" }
        return text
    }

    mutating func randomRequest() -> FetchRequest {
        let predicate: FetchPredicate?
        switch below(10) {
        case 0: predicate = nil
        case 1..<6: predicate = comparison()
        case 6, 7: predicate = .and((0..<(2 + below(2))).map { _ in chance(0.8) ? comparison() : compound(depth: 1) })
        default: predicate = compound(depth: 2)
        }
        var sorts: [FetchSortDescriptor] = []
        if chance(0.45) {
            let (path, _) = pick(Self.paths)
            sorts.append(FetchSortDescriptor(path, ascending: chance(0.75)))
            if chance(0.2) { sorts.append(FetchSortDescriptor(pick(Self.paths).0, ascending: chance(0.5))) }
        }
        let limit = chance(0.3) ? below(25) : nil
        let offset = chance(0.2) ? below(10) : 0
        return FetchRequest("Thing", predicate: predicate, sortedBy: sorts, limit: limit, offset: offset)
    }

    mutating func compound(depth: Int) -> FetchPredicate {
        if depth == 0 { return comparison() }
        switch below(4) {
        case 0: return .not(compound(depth: depth - 1))
        case 1: return .or((0..<2).map { _ in compound(depth: depth - 1) })
        case 2: return .and((0..<2).map { _ in compound(depth: depth - 1) })
        default: return comparison()
        }
    }

    /// One well-typed comparison on a random key path.
    mutating func comparison() -> FetchPredicate {
        let (path, kind) = pick(Self.paths)
        let lhs = FetchExpression.keyPath(path.split(separator: ".").map(String.init))
        func make(_ op: ComparisonOperator, _ rhs: FetchExpression, _ options: StringOptions = []) -> FetchPredicate {
            .comparison(Comparison(lhs, op, rhs, options: options))
        }
        if chance(0.05) { return make(chance(0.5) ? .equal : .notEqual, .constant(.null)) }
        let op: ComparisonOperator
        if kind == .string && !path.contains(".") && chance(0.2) {
            // Words: of a stored value's variant, often cut to a prefix; over one attribute or
            // two (a word index over `s`, one over `s` and `t`, none over the others).
            var words = String(variant(of: pick(stored))).split(separator: " ").map(String.init)
            if words.isEmpty || chance(0.2) { words.append(pick(Self.strings)) }
            if chance(0.3) { words[words.count - 1] = String(words[words.count - 1].prefix(2)) + "*" }
            let query = words.joined(separator: " ")
            let op: ComparisonOperator = chance(0.5) ? .containsWords : .containsAnyWord
            let left: FetchExpression = chance(0.3) && path != "t" ? .list([lhs, .keyPath(["t"])]) : lhs
            // A query without a word is refused before any row is read: made of words instead.
            guard (try? WordQuery(query, match: .allWords)) != nil else {
                return .comparison(Comparison(left, op, .constant(.string("cafe stra*"))))
            }
            return .comparison(Comparison(left, op, .constant(.string(query))))
        }
        if kind == .string {
            op = pick([.equal, .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .between, .in, .in,
                       .beginsWith, .beginsWith, .beginsWith, .endsWith, .contains, .like, .matches])
        } else {
            op = pick([.equal, .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .between, .in])
        }
        let options: StringOptions = kind == .string
            ? pick([[], [], [], [.caseInsensitive], [.diacriticInsensitive], [.caseInsensitive, .diacriticInsensitive],
                    [.caseInsensitive, .diacriticInsensitive], [.normalized], [.caseInsensitive, .diacriticInsensitive, .normalized]])
            : []
        switch op {
        case .in:
            let values = (0..<(1 + below(4))).map { _ in chance(0.1) ? StoredValue.null : constant(kind) }
            return make(.in, .list(values.map { .constant($0) }), options)
        case .between:
            return make(.between, .list([.constant(constant(kind)), .constant(constant(kind))]), options)
        case .like:
            return make(.like, .constant(.string(likePattern())), options)
        case .matches:
            let prefix = String(variant(of: pick(stored)).prefix(3))
            return make(.matches, .constant(.string(NSRegularExpression.escapedPattern(for: prefix) + ".*")), options)
        case .beginsWith, .endsWith, .contains:
            // Often a run of scalars of a stored value, which may end inside a character.
            guard chance(0.5) else { return make(op, .constant(constant(kind)), options) }
            let scalars = Array(pick(stored).unicodeScalars)
            let n = below(scalars.count + 1)
            let run = op == .endsWith ? scalars.suffix(n) : scalars.prefix(n)
            var text = String.UnicodeScalarView()
            text.append(contentsOf: run)
            return make(op, .constant(.string(String(text))), options)
        default:
            return make(op, .constant(constant(kind)), options)
        }
    }

    mutating func likePattern() -> String {
        let s = variant(of: pick(stored)).replacingOccurrences(of: "*", with: "\\*").replacingOccurrences(of: "?", with: "\\?")
        let cut = String(s.prefix(1 + below(4)))
        switch below(4) {
        case 0: return cut + "*"
        case 1: return "*" + String(s.suffix(2))
        case 2: return cut + "?*"
        default: return "*"
        }
    }

    /// A constant for a key path of `kind`, of that kind or another that compares with it
    /// (numbers across int, double and decimal; integers for objects).
    mutating func constant(_ kind: Kind) -> StoredValue {
        switch kind {
        case .string: return .string(chance(0.5) && !stored.isEmpty ? variant(of: pick(stored)) : string())
        case .int, .int16, .double, .decimal:
            switch below(3) {
            case 0: return .int(kind == .int16 ? pick(Self.smallIntegers) : pick(Self.integers))
            case 1: return .double(pick(Self.doubles))
            default: return .decimal(pick(Self.decimals))
            }
        case .bool: return .bool(chance(0.5))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: pick(Self.doubles)))
        case .uuid: return .uuid(pick(Self.uuids))
        case .binary: return .binary(pick(Self.binaries))
        case .object: return .int(Int64(chance(0.9) ? pick(owners).primaryKey : 999))
        }
    }
}
