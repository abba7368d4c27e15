import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

@Suite struct FetchTests {
    static func populated() throws -> (RecordStore, [ObjectID]) {
        let store = try makeStore(try todoModel())
        let names = ["Café", "cafeteria", "CAFÉ NOIR", "Groceries", "Straße", "strasse 2", "Ørsted", "work", "Work items", "zebra"]
        let lists = try store.write { tx -> [ObjectID] in
            var lists: [ObjectID] = []
            for (i, n) in names.enumerated() {
                let l = try tx.insert("TodoList", ["name": n])
                lists.append(l)
                for j in 0..<i { try tx.insert("Item", ["title": "t\(j % 4)", "amount": Decimal(j), "quantity": j % 3 + 1, "list": l]) }
            }
            return lists
        }
        return (store, lists)
    }

    /// Every object of the entity, filtered by evaluating the predicate directly: the answer
    /// any plan must give.
    static func bruteForce(_ store: RecordStore, _ request: FetchRequest) throws -> Set<ObjectID> {
        let compiled = try request.predicate.map { try CompiledPredicate($0) }
        return try store.read { r in
            let e = try r.entity(request.entity)
            var out = Set<ObjectID>()
            for id in try r.objects(request.entity) {
                let key = RowKey(entity: e.index, pk: id.primaryKey)
                guard let row = try r.row(key) else { continue }
                if try compiled?.evaluate(RowSubject(reader: r, key: key, row: row)) ?? true { out.insert(id) }
            }
            return out
        }
    }

    /// An index holds values in the attribute's own type: a constant of another numeric type
    /// must be converted before it becomes a key, or the index misses equal values (and a
    /// constant no value can equal must find nothing).
    @Test func indexedEqualityConvertsTheConstantToTheAttributesType() throws {
        let model = try Model {
            Entity("Reading") {
                AttributeDescription("celsius", .double)
                AttributeDescription("price", .decimal)
                AttributeDescription("count", .int32)
                FetchIndex("celsius")
                FetchIndex("price")
                FetchIndex("count")
            }
        }
        let store = try makeStore(model)
        try store.write { tx in
            for i in 0..<6 {
                try tx.insert("Reading", ["celsius": Double(i), "price": Decimal(i), "count": i])
            }
        }
        // Constants with an exact conversion use the index; the others (2.5 for an integer, a
        // double for a decimal) are left to a scan rather than risk a key of the wrong type.
        let indexed = ["celsius == 3", "price == 3", "count == 3.0", "price IN {2, 3}", "celsius BETWEEN {2, 3}", "price > 4"]
        let scanned = ["price IN {2, 3.0}", "count == 2.5", "count < 1.5"]
        for format in indexed + scanned {
            let request = FetchRequest("Reading", predicate: try FetchPredicate(format: format))
            let plan = try store.read { try $0.fetchPlanDescription(request) }
            #expect(plan.contains("index:") == indexed.contains(format), "\(format): \(plan)")
            let found = Set(try store.read { try $0.fetch(request) })
            #expect(found == (try Self.bruteForce(store, request)), "\(format)")
            #expect(!found.isEmpty || format == "count == 2.5", "\(format)")
        }
    }

    /// Index entries hold a value's bytes: rewriting a string into a canonically equivalent
    /// spelling (NFC "é" to NFD "e" + U+0301, equal by Swift's `==`) must move its entry.
    @Test func equivalentSpellingsMoveTheirIndexEntries() throws {
        let (store, _) = try Self.populated()
        let item = try store.write { tx in try tx.insert("Item", ["title": "caf\u{E9}"]) }
        try store.write { tx in try tx.update(item, ["title": "cafe\u{301}"]) }
        try expectConsistent(store)
        let request = FetchRequest("Item", predicate: try FetchPredicate(format: "title == %@", "cafe\u{301}"))
        #expect(try store.read { try $0.fetch(request) } == [item])
    }

    @Test func indexedPrefixSearchIsCaseAndDiacriticInsensitive() throws {
        let (store, lists) = try Self.populated()
        let request = FetchRequest("TodoList", predicate: try FetchPredicate(format: "searchName BEGINSWITH[cd] %@", "CAFE"))
        let plan = try store.read { try $0.fetchPlanDescription(request) }
        #expect(plan.contains("index:TodoList:searchName"), "\(plan)")
        let found = Set(try store.read { try $0.fetch(request) })
        #expect(found == [lists[0], lists[1], lists[2]])
        #expect(found == (try Self.bruteForce(store, request)))
        // The attribute itself, through its canonical index.
        let byName = FetchRequest("TodoList", predicate: try FetchPredicate(format: "name BEGINSWITH[cd] %@", "strasse"))
        #expect(try store.read { try $0.fetchPlanDescription(byName) }.contains("searchName"))
        #expect(Set(try store.read { try $0.fetch(byName) }) == [lists[4], lists[5]])
    }

    @Test func plansAgreeWithBruteForce() throws {
        let (store, _) = try Self.populated()
        let formats: [(String, [(any PredicateArgument)?])] = [
            ("title == %@", ["t1"]),
            ("title IN %@", [["t0", "t3"]]),
            ("title >= %@ AND amount < %@", ["t2", 5]),
            ("title BEGINSWITH %@ AND list.name CONTAINS[cd] %@", ["t", "cafe"]),
            ("lineTotal > 6 OR title == 't0'", []),
            ("listName == nil", []),
            ("NOT (amount BETWEEN {2, 4})", []),
        ]
        for (format, args) in formats {
            let request = FetchRequest("Item", predicate: try FetchPredicate(format: format, argumentArray: args))
            let fetched = try store.read { try $0.fetch(request) }
            #expect(Set(fetched) == (try Self.bruteForce(store, request)), "\(format)")
            #expect(fetched.count == Set(fetched).count, "\(format): duplicates")
        }
        for (format, args) in [("itemCount > %@", [3] as [(any PredicateArgument)?]), ("ANY items.amount >= %@", [7]), ("items.@count == 0", []), ("items.amount.@sum > 20", [])] {
            let request = FetchRequest("TodoList", predicate: try FetchPredicate(format: format, argumentArray: args))
            #expect(Set(try store.read { try $0.fetch(request) }) == (try Self.bruteForce(store, request)), "\(format)")
        }
    }

    /// Terms an index decides are not checked again on rows, and fetches whose predicate the
    /// index decides read no rows: the answers must still be the brute-force ones, with limits,
    /// offsets, sorts and the rest of the predicate applied.
    @Test func decidedTermsAgreeWithBruteForce() throws {
        let (store, _) = try Self.populated()
        let cases: [(String, String, [(any PredicateArgument)?], Bool)] = [
            ("Item", "title == %@", ["t1"], true),
            ("Item", "title IN %@", [["t0", "t3", "t0"]], true),
            ("Item", "title BEGINSWITH[n] %@", ["t"], true),
            ("Item", "title BEGINSWITH %@", ["t"], false),          // grapheme-aware: narrowed only
            ("Item", "title == %@ AND amount > %@", ["t2", 3], true),
            ("Item", "(title == %@ AND quantity == 2) AND amount < %@", ["t0", 7], true),
            ("Item", "title >= %@", ["t2"], false),
            ("TodoList", "searchName BEGINSWITH[cd] %@", ["STRA"], true),
            ("TodoList", "name BEGINSWITH[cd] %@", ["Ca"], true),
            ("TodoList", "name ==[cd] %@", ["cafe"], true),
            ("TodoList", "searchName BEGINSWITH[cdn] %@", ["STRA"], true),   // [n] supersedes: NFC bytes, no folding
            ("TodoList", "searchName BEGINSWITH[cdn] %@", ["stra"], true),
            ("TodoList", "searchName ==[c] %@", ["CAFE"], false),
        ]
        let orders: [([FetchSortDescriptor], Int?, Int)] = [([], nil, 0), ([], 2, 1), ([FetchSortDescriptor("amount", ascending: false)], 3, 1),
                                                       ([FetchSortDescriptor("name")], 2, 0)]
        for (entity, format, args, decides) in cases {
            let predicate = try FetchPredicate(format: format, argumentArray: args)
            let plan = try store.read { try $0.fetchPlanDescription(FetchRequest(entity, predicate: predicate)) }
            #expect(plan.contains("decides a term") == decides, "\(format): \(plan)")
            let expected = try Self.bruteForce(store, FetchRequest(entity, predicate: predicate))
            for (sort, limit, offset) in orders {
                let sort = sort.filter { entity == "Item" ? $0.keyPath == "amount" : $0.keyPath == "name" }
                let request = FetchRequest(entity, predicate: predicate, sortedBy: sort, limit: limit, offset: offset)
                let fetched = try store.read { try $0.fetch(request) }
                #expect(fetched.count == Set(fetched).count, "\(format): duplicates")
                #expect(Set(fetched).isSubset(of: expected), "\(format) \(sort) \(String(describing: limit)) \(offset)")
                #expect(fetched.count == min(limit ?? .max, max(0, expected.count - offset)), "\(format) \(sort) \(String(describing: limit)) \(offset)")
                #expect(try store.read { try $0.fetchCount(request) } == fetched.count, "\(format)")
                if !sort.isEmpty {
                    let values = try store.read { r in try fetched.map { try r.value(sort[0].keyPath, of: $0) } }
                    #expect(zip(values, values.dropFirst()).allSatisfy { (StoredValue.compare($0, $1) ?? 0) * (sort[0].ascending ? 1 : -1) <= 0 }, "\(format): order")
                }
            }
            // The same inside a write transaction, which answers from its own changes.
            let inWrite = try store.write { tx in Set(try tx.fetch(FetchRequest(entity, predicate: predicate))) }
            #expect(inWrite == expected, "\(format) in a write transaction")
        }
    }

    @Test func sortLimitOffsetAndCount() throws {
        let (store, _) = try Self.populated()
        let all = FetchRequest("TodoList", sortedBy: [FetchSortDescriptor("itemCount", ascending: false)])
        let counts = try store.read { r in try r.fetch(all).map { try r.value("itemCount", of: $0) } }
        #expect(counts == (0..<10).reversed().map { .int(Int64($0)) })
        let page = FetchRequest("TodoList", sortedBy: [FetchSortDescriptor("searchName")], limit: 3, offset: 2)
        #expect(try store.read { try $0.fetchPlanDescription(page) }.contains("in order"))
        let names = try store.read { r in try r.fetch(page).map { try r.value("searchName", of: $0) } }
        let sorted = try store.read { r in try r.objects("TodoList").map { try r.value("searchName", of: $0) } }
            .sorted { StoredValue.compare($0, $1)! < 0 }
        #expect(names == Array(sorted[2..<5]))
        #expect(try store.read { try $0.fetchCount(FetchRequest("Item", predicate: try FetchPredicate(format: "title == 't0'"))) } == 15)
    }

    /// An index on the first sort key orders only by that key: ties must still be ordered by
    /// the next descriptors.
    @Test func secondarySortKeysOrderTiesOfAnIndexedFirstKey() throws {
        let (store, _) = try Self.populated()
        let request = FetchRequest("Item", sortedBy: [FetchSortDescriptor("title"), FetchSortDescriptor("amount", ascending: false)])
        let rows = try store.read { r in
            try r.fetch(request).map { (try r.value("title", of: $0), try r.value("amount", of: $0)) }
        }
        #expect(rows.count == 45)
        let expected = rows.sorted { a, b in
            let t = StoredValue.compare(a.0, b.0)!
            return t != 0 ? t < 0 : StoredValue.compare(a.1, b.1)! > 0
        }
        #expect(rows.map(\.0) == expected.map(\.0))
        #expect(rows.map(\.1) == expected.map(\.1))
    }

    @Test func transientAttributesAreAClearErrorInStoredFetches() throws {
        let model = try Model {
            Entity("Person") {
                AttributeDescription("first", .string)
                AttributeDescription("fullName", .string, optional: true, transient: true)
            }
        }
        let store = try makeStore(model)
        _ = try store.write { tx in try tx.insert("Person", ["first": "Ada"]) }
        #expect(throws: StrataError.self) {
            _ = try store.read { try $0.fetch(FetchRequest("Person", predicate: try FetchPredicate(format: "fullName == 'x'"))) }
        }
        #expect(throws: StrataError.self) {
            _ = try store.read { try $0.fetch(FetchRequest("Person", sortedBy: [FetchSortDescriptor("fullName")])) }
        }
    }

    /// A scan whose predicate reads only the row's own fields compares them on the stored bytes
    /// (`RowBytesSubject`); inside a write, rows the transaction changed are read as changed,
    /// whether or not their bytes were written yet, and deleted rows are gone.
    @Test func fieldScansInsideAWriteSeeItsChanges() throws {
        let (store, lists) = try Self.populated()
        let cheap = FetchRequest("Item", predicate: PropertyPath("amount") < StoredValue.decimal(2))
        let before = try store.read { Set(try $0.fetch(cheap)) }
        #expect(before.count == 17)
        let (inside, raised, lowered) = try store.write { tx -> (Set<ObjectID>, ObjectID, ObjectID) in
            let items = try tx.fetch(FetchRequest("Item", sortedBy: [FetchSortDescriptor("amount")]))
            let raised = items.first!, lowered = items.last!
            try tx.update(raised, ["amount": Decimal(50)])
            try tx.update(lowered, ["amount": Decimal(-1)])
            try tx.delete(items[1])
            _ = try tx.insert("Item", ["title": "new", "amount": Decimal(1), "list": lists[1]])
            return (Set(try tx.fetch(cheap)), raised, lowered)
        }
        #expect(inside.count == before.count - 2 + 2)
        #expect(!inside.contains(raised) && inside.contains(lowered))
        #expect(inside == (try store.read { Set(try $0.fetch(cheap)) }))
    }

    /// The two subjects a scan's predicate reads agree on every field of every row: a field
    /// decoded from the stored bytes alone is the value in the decoded row.
    @Test func aFieldReadFromStoredBytesIsTheDecodedRowsValue() throws {
        let (store, _) = try Self.populated()
        try store.read { r in
            for entityName in ["TodoList", "Item"] {
                let entity = try r.entity(entityName)
                for id in try r.objects(entityName) {
                    let key = RowKey(entity: entity.index, pk: id.primaryKey)
                    let row = try #require(try r.row(key))
                    let bytes = RowCodec.encode(row, fields: entity.fields)
                    let read = try bytes.withUnsafeBytes { stored in
                        let subject = RowBytesSubject(reader: r, key: key, bytes: stored, fields: entity.fields)
                        return try entity.fields.indices.map { try subject.value(atField: $0) }
                    }
                    #expect(read == row, "\(entityName) \(id)")
                }
            }
        }
    }

    @Test func fetchesInsideAWriteSeeItsChanges() throws {
        let (store, lists) = try Self.populated()
        let n = try store.write { tx -> Int in
            try tx.insert("Item", ["title": "fresh", "list": lists[0]])
            return try tx.fetchCount(FetchRequest("Item", predicate: try FetchPredicate(format: "title == 'fresh'")))
        }
        #expect(n == 1)
    }
}
