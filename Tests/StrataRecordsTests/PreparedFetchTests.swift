import Foundation
import Testing
import StrataStorage
import StrataTesting
@testable import StrataRecords

/// Prepared fetches (decision 36): `$variables` in format strings and the builder, values by
/// name or position, the same answers and errors as the request with the values written in,
/// and every misuse an error. `FetchDifferentialTests` runs most of its random fetches prepared
/// too, against the planner and a scan.
@Suite struct PreparedFetchTests {
    private func fetchError(_ body: () throws -> Void) -> String? {
        do { try body() } catch let StrataError.invalidFetch(message) { return message } catch { return "\(error)" }
        return nil
    }

    /// A range's end test (`KeyRange.isPast`) is its definition: past when the key neither
    /// starts with the upper bound nor precedes it, for random keys and bounds of 0–6 bytes
    /// drawn from a few byte values (so prefixes and ties are common).
    @Test func aRangeEndsWhereItsDefinitionSays() {
        let seed: UInt64 = 20_261_129_92
        var rng = SplitMix64(seed: seed)
        func bytes() -> [UInt8] { (0..<Int(rng.next() % 7)).map { _ in [0, 1, 0x7F, 0x80, 0xFF][Int(rng.next() % 5)] } }
        for _ in 0..<20_000 {
            var key = bytes()
            if key.isEmpty { key = [0] }
            let upper = bytes()
            let range = KeyRange([], upper)
            let expected = !key.starts(with: upper) && !key.lexicographicallyPrecedes(upper)
            #expect(key.withUnsafeBytes { range.isPast($0) } == expected, "seed \(seed): key \(key), upper \(upper)")
        }
        #expect([UInt8]([0xFF]).withUnsafeBytes { KeyRange([], nil).isPast($0) } == false)
    }

    @Test func variablesParseDescribeAndBuild() throws {
        let parsed = try FetchPredicate(format: "title == $title AND quantity BETWEEN {$low, $high}")
        #expect(parsed.description == "title == $title AND quantity BETWEEN {$low, $high}")
        #expect(try FetchPredicate(format: parsed.description) == parsed)
        #expect(parsed.hasVariables)
        let built = PropertyPath("title") == .variable("title")
        #expect(built == .comparison(Comparison(.keyPath(["title"]), .equal, .variable("title"))))
        let substituted = try built.substituting(["title": .string("a")])
        #expect(substituted == (PropertyPath("title") == "a"))
        #expect(fetchError { _ = try built.substituting([:]) }?.contains("$title") == true)
        #expect(throws: StrataError.self) { _ = try FetchPredicate(format: "title == $") }
        #expect(throws: StrataError.self) { _ = try FetchPredicate(format: "title == $1x") }
    }

    @Test func runsWithValuesByNameAndPosition_likeTheRequestWithConstants() throws {
        let (store, _) = try FetchTests.populated()
        let byName = try store.prepare(FetchRequest("TodoList", predicate: try FetchPredicate(format: "name BEGINSWITH[cd] $prefix AND itemCount >= $least"),
                                                    sortedBy: [FetchSortDescriptor("name")]))
        #expect(byName.variables == ["prefix", "least"])
        try store.read { r in
            for (prefix, least) in [("caf", 0), ("CAF", 2), ("str", 5), ("zz", 0), ("", 3)] {
                let constants = FetchRequest("TodoList", predicate: try FetchPredicate(format: "name BEGINSWITH[cd] %@ AND itemCount >= %d", prefix, least),
                                             sortedBy: [FetchSortDescriptor("name")])
                let expected = try r.fetch(constants)
                #expect(try r.fetch(byName, ["prefix": .string(prefix), "least": .int(Int64(least))]) == expected)
                #expect(try r.fetch(byName, values: [.string(prefix), .int(Int64(least))]) == expected)
                #expect(try r.fetchCount(byName, values: [.string(prefix), .int(Int64(least))]) == expected.count)
            }
        }
        // A prepared fetch without variables runs with no values.
        let all = try store.prepare(FetchRequest("Item", predicate: PropertyPath("quantity") > 1))
        try store.read { r in
            let expected = try r.fetch(FetchRequest("Item", predicate: PropertyPath("quantity") > 1))
            #expect(try r.fetch(all) == expected)
        }
    }

    /// Values an index cannot take (a fraction against integers) run the request with them as
    /// constants; inside a write transaction the `canonical:` index stands for `[cd]`
    /// comparisons no longer, and the prepared fetch sees the transaction's own rows.
    @Test func valuesTheIndexCannotTakeAndWriteTransactions() throws {
        let (store, lists) = try FetchTests.populated()
        let byQuantity = try store.prepare(FetchRequest("Item", predicate: try FetchPredicate(format: "quantity == $q")))
        try store.read { r in
            #expect(try r.fetch(byQuantity, values: [.double(1.5)]).isEmpty)
            let two = try r.fetch(FetchRequest("Item", predicate: PropertyPath("quantity") == 2))
            let three = try r.fetch(FetchRequest("Item", predicate: PropertyPath("quantity") == 3))
            #expect(!two.isEmpty && !three.isEmpty)
            #expect(try r.fetch(byQuantity, values: [.double(2)]) == two)
            #expect(try r.fetch(byQuantity, values: [.decimal(Decimal(3))]) == three)
        }
        let bySearch = try store.prepare(FetchRequest("TodoList", predicate: try FetchPredicate(format: "name BEGINSWITH[cd] $p")))
        try store.write { tx in
            try tx.update(lists[7], ["name": "Cafard"])          // was "work"
            let inside = try tx.fetch(bySearch, values: [.string("CAF")])
            let expected = try tx.fetch(FetchRequest("TodoList", predicate: try FetchPredicate(format: "name BEGINSWITH[cd] 'CAF'")))
            #expect(Set(inside) == Set(expected))
            #expect(inside.contains(lists[7]))
        }
        let after = try store.read { r in try r.fetch(bySearch, values: [.string("caf")]) }
        #expect(after.contains(lists[7]))
    }

    /// `attribute == $value` on the attribute's own index reads the index's keys with the key
    /// made from the value, without a plan (`PreparedFetch.IndexLookup`): the same rows as a
    /// scan for values of every kind the index holds, for values it must convert or cannot take,
    /// for nil, NaN and a string cut to fit a key (which go the general way).
    @Test func lookupsByEqualityAnswerAsAScan() throws {
        let model = try Model {
            Entity("Part") {
                AttributeDescription("sku", .string, optional: true)
                AttributeDescription("weight", .double, optional: true)
                AttributeDescription("count", .int64, optional: true)
                AttributeDescription("made", .date, optional: true)
                FetchIndex("sku")
                FetchIndex("weight")
                FetchIndex("count")
                FetchIndex("made")
            }
        }
        let store = try makeStore(model)
        let long = String(repeating: "x", count: 1_000)
        let skus: [StoredValue] = [.string("a"), .string("b"), .string("Ä"), .string("A\u{308}"), .string(long),
                                   .string(long + "y"), .string(""), .null]
        let weights: [StoredValue] = [.double(1), .double(2.5), .double(-0.0), .double(0), .double(-1e300), .null]
        let counts: [StoredValue] = [.int(0), .int(-1), .int(Int64.max), .null]
        let dates: [StoredValue] = [.date(Date(timeIntervalSinceReferenceDate: 0)), .date(Date(timeIntervalSinceReferenceDate: 1e9)), .null]
        try store.write { tx in
            for i in 0..<200 {
                _ = try tx.insert("Part", ["sku": skus[i % skus.count], "weight": weights[i % weights.count],
                                           "count": counts[i % counts.count], "made": dates[i % dates.count]])
            }
        }
        let probes: [(String, [StoredValue])] = [
            ("sku", skus + [.string("zz")]),
            ("weight", weights + [.int(1), .decimal(Decimal(2.5)), .double(3), .double(.nan), .double(.infinity)]),
            ("count", counts + [.double(0), .double(0.5), .decimal(Decimal(-1))]),
            ("made", dates),
        ]
        for (attribute, values) in probes {
            let prepared = try store.prepare(FetchRequest("Part", predicate: PropertyPath(attribute) == .variable("v")))
            #expect(prepared.lookup?.kind == .equal, "\(attribute)")
            try store.read { r in
                for value in values {
                    var scan = FetchRequest("Part", predicate: PropertyPath(attribute) == value)
                    scan.usesIndexes = false
                    let expected = Set(try r.fetch(scan))
                    #expect(Set(try r.fetch(prepared, values: [value])) == expected, "\(attribute) == \(value)")
                }
            }
        }
        // Shapes the lookup does not answer: folded, with a residual, sorted.
        for request in [FetchRequest("Part", predicate: try FetchPredicate(format: "sku ==[cd] $v")),
                        FetchRequest("Part", predicate: try FetchPredicate(format: "sku == $v AND count > 0")),
                        FetchRequest("Part", predicate: try FetchPredicate(format: "sku == $v"), sortedBy: [FetchSortDescriptor("weight")])] {
            #expect(try store.prepare(request).lookup == nil, "\(request)")
        }
    }

    /// A lookup reads the leaf its value's first key is in without a path, then walks on with a
    /// cursor when the value's keys go on into later leaves: values with a thousand rows (over
    /// many leaves), values whose one row is a leaf's last or first entry, values between two
    /// leaves' keys and limits all find what a scan finds, in index order. In a write transaction
    /// after its own inserts the same prepared fetch runs through its plan (derived values are
    /// settled first), and must agree too.
    @Test func lookupsReadRangesAcrossLeaves() throws {
        let model = try Model {
            Entity("Part") {
                AttributeDescription("sku", .string, optional: true)
                FetchIndex("sku")
            }
        }
        let store = try makeStore(model)
        // Three crowded values among unique ones, so the crowded ranges span leaves and the
        // unique keys land at every position of a leaf.
        func sku(_ i: Int) -> String { i % 4 == 0 ? "crowd-\(i % 3)" : String(format: "part-%06d", i) }
        try store.write { tx in
            for i in 0..<4_000 { _ = try tx.insert("Part", ["sku": StoredValue.string(sku(i))]) }
        }
        let prepared = try store.prepare(FetchRequest("Part", predicate: PropertyPath("sku") == .variable("v")))
        var limitedRequest = FetchRequest("Part", predicate: PropertyPath("sku") == .variable("v"))
        limitedRequest.limit = 200
        let limited = try store.prepare(limitedRequest)
        #expect(prepared.lookup?.kind == .equal)
        let probes = (0..<3).map { "crowd-\($0)" } + stride(from: 1, to: 4_000, by: 7).map { sku($0) }
            + ["part-000001x", "part-", "crowd-", "zzz", ""]
        func check(_ r: RecordReader, _ label: String) throws {
            for probe in probes {
                var scan = FetchRequest("Part", predicate: PropertyPath("sku") == probe)
                scan.usesIndexes = false
                let expected = try r.fetch(scan)
                let found = try r.fetch(prepared, values: [.string(probe)])
                #expect(found == expected, "\(label): sku == \(probe)")
                #expect(try r.fetch(limited, values: [.string(probe)]) == Array(expected.prefix(200)),
                        "\(label): sku == \(probe), limit 200")
            }
        }
        try store.read { r in try check(r, "snapshot") }
        try store.write { tx in
            for i in 4_000..<5_000 { _ = try tx.insert("Part", ["sku": StoredValue.string(sku(i))]) }
            try check(tx, "write transaction")
        }
    }

    /// A plain ASCII probe's key, appended in one pass or written over a lookup's last key, is
    /// byte for byte the general encoding's (a prefix's: without the terminator), whatever the
    /// buffer held; every string the one pass does not take (a `00` byte, non-ASCII, longer than
    /// a key keeps) is left to the general path, the buffer untouched.
    @Test func plainProbesAreKeyedAsTheGeneralEncodingKeysThem() {
        let taken = ["", "a", "SKU-000123", String(repeating: "x", count: KeyEncoding.maxValueBytes), "~ !\u{7F}"]
        let refused = ["a\u{0}b", "\u{0}", "é", "e\u{301}", String(repeating: "x", count: KeyEncoding.maxValueBytes + 1)]
        // A lookup's buffer as the last run left it: empty, shorter, as long, longer.
        let lastKeys: [[UInt8]] = [[], [7, 7], Array(repeating: 7, count: 13), Array(repeating: 7, count: 1_000)]
        for string in taken {
            var plain: [UInt8] = [9]
            #expect(KeyEncoding.appendPlainASCII(string, to: &plain), "\(string.prefix(20))")
            var general: [UInt8] = [9]
            #expect(KeyEncoding.append(.string(string), to: &general), "\(string.prefix(20))")
            #expect(plain == general, "\(string.prefix(20))")
            for last in lastKeys {
                var whole = last
                #expect(KeyEncoding.setPlainASCIIKey(string, terminated: true, in: &whole))
                #expect(whole == Array(general.dropFirst()), "\(string.prefix(20)) over \(last.count) bytes")
                var prefix = last
                #expect(KeyEncoding.setPlainASCIIKey(string, terminated: false, in: &prefix))
                #expect(prefix == Array(general.dropFirst().dropLast(2)), "\(string.prefix(20)) as a prefix over \(last.count) bytes")
            }
        }
        for string in refused {
            var plain: [UInt8] = [9]
            #expect(!KeyEncoding.appendPlainASCII(string, to: &plain), "\(string.prefix(20))")
            #expect(plain == [9], "\(string.prefix(20)): nothing appended")
            var set: [UInt8] = [7, 7]
            #expect(!KeyEncoding.setPlainASCIIKey(string, terminated: true, in: &set), "\(string.prefix(20))")
            #expect(set == [7, 7], "\(string.prefix(20)): key unchanged")
        }
    }

    /// `attribute BEGINSWITH[n] $p` on the attribute's index and `BEGINSWITH[cd] $p` on an
    /// index of `canonical:(attribute)` (named either way) read the index's keys from the key
    /// made from the value, without a plan (`PreparedFetch.IndexLookup`, kind `.prefix`): the same
    /// rows as a scan, for random prefixes of stored names (cut, cased, decomposed), the empty
    /// prefix, NULs, and prefixes longer than a key (which go the general way). Shapes the index
    /// does not decide alone take no lookup.
    @Test func lookupsByPrefixAnswerAsAScan() throws {
        let model = try Model {
            Entity("Tag") {
                AttributeDescription("name", .string, optional: true)
                DerivedAttributeDescription("folded", .string, "canonical:(name)", optional: true)
                FetchIndex("name")
                FetchIndex("folded")
            }
        }
        let store = try makeStore(model)
        let seed: UInt64 = 20_261_130
        var rng = SplitMix64(seed: seed)
        let pieces = ["ca", "Ca", "CAF", "café", "cafe\u{301}", "Ça", "straße", "STRASSE", "x\u{0}y", "日本", "", "zz", "a"]
        func name() -> String { (0..<Int(rng.next() % 4)).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined() }
        var names: [String] = []
        try store.write { tx in
            for i in 0..<300 {
                let text = i % 50 == 0 ? String(repeating: "k", count: 1_000) + name() : name()
                names.append(text)
                let value: StoredValue = i % 37 == 0 ? .null : .string(text)
                _ = try tx.insert("Tag", ["name": value])
            }
        }
        let shapes: [(String, String)] = [("name BEGINSWITH[n] $p", "name BEGINSWITH[n] %@"),
                                          ("name BEGINSWITH[cd] $p", "name BEGINSWITH[cd] %@"),
                                          ("folded BEGINSWITH[cd] $p", "folded BEGINSWITH[cd] %@")]
        for (format, constantFormat) in shapes {
            let prepared = try store.prepare(FetchRequest("Tag", predicate: try FetchPredicate(format: format)))
            #expect(prepared.lookup?.kind == .prefix, "\(format)")
            var probes = ["", "\u{0}", String(repeating: "k", count: 1_100), "Ç", "e\u{301}"] + pieces
            for _ in 0..<60 {
                let whole = names[Int(rng.next() % UInt64(names.count))]
                probes.append(String(whole.prefix(Int(rng.next() % UInt64(whole.count + 1)))))
            }
            try store.read { r in
                for probe in probes {
                    var scan = FetchRequest("Tag", predicate: try FetchPredicate(format: constantFormat, probe))
                    scan.usesIndexes = false
                    let expected = Set(try r.fetch(scan))
                    #expect(Set(try r.fetch(prepared, values: [.string(probe)])) == expected,
                            "seed \(seed): \(format) with \(probe.debugDescription)")
                    #expect(try r.fetchCount(prepared, values: [.string(probe)]) == expected.count, "seed \(seed)")
                }
            }
        }
        // Limits apply; shapes the index does not decide alone take no lookup: without
        // options (grapheme-aware, re-checked), `[c]` alone, with a residual, sorted.
        var limited = FetchRequest("Tag", predicate: try FetchPredicate(format: "folded BEGINSWITH[cd] $p"))
        limited.limit = 3
        let firstThree = try store.prepare(limited)
        #expect(firstThree.lookup != nil)
        let three = try store.read { r in try r.fetch(firstThree, values: [.string("")]) }
        #expect(three.count == 3)
        // A probe longer than any key leaves its room in the reader's key buffer only until the
        // next lookup.
        let held = try store.read { r in
            _ = try r.fetch(firstThree, values: [.string(String(repeating: "k", count: 50_000))])
            _ = try r.fetch(firstThree, values: [.string("ca")])
            return r.lookupKey.capacity
        }
        #expect(held <= PreparedFetch.IndexLookup.keptKeyCapacity)
        for request in [FetchRequest("Tag", predicate: try FetchPredicate(format: "name BEGINSWITH $p")),
                        FetchRequest("Tag", predicate: try FetchPredicate(format: "name BEGINSWITH[c] $p")),
                        FetchRequest("Tag", predicate: try FetchPredicate(format: "name BEGINSWITH[n] $p AND folded != nil")),
                        FetchRequest("Tag", predicate: try FetchPredicate(format: "name BEGINSWITH[cd] $p"),
                                     sortedBy: [FetchSortDescriptor("name")])] {
            #expect(try store.prepare(request).lookup == nil, "\(request)")
        }
    }

    /// The errors of the request with the values written in, checked again for values of new
    /// kinds; missing, extra and miscounted values; a store with another model; a request with
    /// variables run unprepared; what preparing alone can tell.
    @Test func misusesAreErrors() throws {
        let (store, _) = try FetchTests.populated()
        let fetch = try store.prepare(FetchRequest("Item", predicate: try FetchPredicate(format: "title == $t AND quantity > $q")))
        try store.read { r in
            _ = try r.fetch(fetch, values: [.string("t1"), .int(1)])
            let wrongKind = fetchError { _ = try r.fetch(fetch, values: [.int(3), .int(1)]) }
            let constants = fetchError { _ = try r.fetch(FetchRequest("Item", predicate: try FetchPredicate(format: "title == 3 AND quantity > 1"))) }
            #expect(wrongKind != nil && wrongKind == constants)
            #expect(fetchError { _ = try r.fetch(fetch, values: [.string("t1"), .null]) }?.contains("nil does not order") == true)
            // The kinds that passed before still pass (the check is cached, not skipped).
            #expect(try r.fetch(fetch, values: [.string("t2"), .int(0)]).count > 0)
            #expect(fetchError { _ = try r.fetch(fetch, ["t": .string("x")]) }?.contains("no value for $q") == true)
            #expect(fetchError { _ = try r.fetch(fetch, ["t": .string("x"), "q": .int(1), "z": .int(2)]) }?.contains("$z") == true)
            #expect(fetchError { _ = try r.fetch(fetch, values: [.string("x")]) }?.contains("1 value for the prepared fetch's 2 variables") == true)
            #expect(fetchError { _ = try r.fetch(FetchRequest("Item", predicate: try FetchPredicate(format: "title == $t"))) }?.contains("$t has no value") == true)
            #expect(fetchError { _ = try r.fetchCount(FetchRequest("Item", predicate: try FetchPredicate(format: "title IN {$t, 'a'}"))) }?.contains("$t") == true)
        }
        let other = try makeStore(try todoModel(), path: "/db/other.strata")
        let foreign = fetchError { _ = try other.read { r in try r.fetch(fetch, values: [.string("t1"), .int(1)]) } }
        #expect(foreign?.contains("another store's model") == true)
        #expect(fetchError { _ = try store.prepare(FetchRequest("Item", predicate: try FetchPredicate(format: "nosuch == $x"))) }?.contains("nosuch") == true)
        #expect(fetchError { _ = try store.prepare(FetchRequest("Item", predicate: try FetchPredicate(format: "title == $x"), limit: -1)) } != nil)
        #expect(fetchError { _ = try store.prepare(FetchRequest("Item", predicate: try FetchPredicate(format: "title BEGINSWITH quantity AND title == $x"))) } != nil)
        #expect(throws: StrataError.self) { _ = try store.prepare(FetchRequest("Nothing")) }
        var kept: RecordReader?
        _ = try store.read { r in kept = r }
        #expect(throws: StrataError.self) { _ = try kept!.fetch(fetch, values: [.string("t1"), .int(1)]) }
    }

    /// Plain requests of one shape share one plan (the model's cache), whatever their
    /// constants; values of another kind are checked again (an error stays an error); the
    /// cache stays bounded when every request has a new shape.
    @Test func repeatedRequestsOfOneShapeShareAPlan() throws {
        let (store, _) = try FetchTests.populated()
        try store.read { r in
            let before = store.model.fetchPlans.count
            var found = 0
            for i in 0..<300 { found += try r.fetch(FetchRequest("Item", predicate: PropertyPath("title") == "t\(i % 5)")).count }
            #expect(found > 0)
            #expect(store.model.fetchPlans.count == before + 1)
            #expect(fetchError { _ = try r.fetch(FetchRequest("Item", predicate: PropertyPath("title") == 3)) }?.contains("cannot be compared") == true)
            #expect(try r.fetch(FetchRequest("Item", predicate: PropertyPath("title") == "t1")).count > 0)
            for i in 0..<(FetchPlanCache.capacity + 20) {
                let terms = (0...(i % 40)).map { _ in PropertyPath("quantity") > 0 }
                let shape = terms.dropFirst().reduce(terms[0]) { $0 && $1 }
                _ = try r.fetchCount(FetchRequest("Item", predicate: shape, limit: i / 40))
            }
            #expect(store.model.fetchPlans.count <= FetchPlanCache.capacity)
        }
    }
}
