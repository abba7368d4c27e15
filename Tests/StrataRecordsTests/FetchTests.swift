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

    @Test func indexedPrefixSearchIsCaseAndDiacriticInsensitive() throws {
        let (store, lists) = try Self.populated()
        let request = FetchRequest("TodoList", predicate: try Predicate(format: "searchName BEGINSWITH[cd] %@", "CAFE"))
        let plan = try store.read { try $0.fetchPlanDescription(request) }
        #expect(plan.contains("index:TodoList:searchName"), "\(plan)")
        let found = Set(try store.read { try $0.fetch(request) })
        #expect(found == [lists[0], lists[1], lists[2]])
        #expect(found == (try Self.bruteForce(store, request)))
        // The attribute itself, through its canonical index.
        let byName = FetchRequest("TodoList", predicate: try Predicate(format: "name BEGINSWITH[cd] %@", "strasse"))
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
            let request = FetchRequest("Item", predicate: try Predicate(format: format, argumentArray: args))
            let fetched = try store.read { try $0.fetch(request) }
            #expect(Set(fetched) == (try Self.bruteForce(store, request)), "\(format)")
            #expect(fetched.count == Set(fetched).count, "\(format): duplicates")
        }
        for (format, args) in [("itemCount > %@", [3] as [(any PredicateArgument)?]), ("ANY items.amount >= %@", [7]), ("items.@count == 0", []), ("items.amount.@sum > 20", [])] {
            let request = FetchRequest("TodoList", predicate: try Predicate(format: format, argumentArray: args))
            #expect(Set(try store.read { try $0.fetch(request) }) == (try Self.bruteForce(store, request)), "\(format)")
        }
    }

    @Test func sortLimitOffsetAndCount() throws {
        let (store, _) = try Self.populated()
        let all = FetchRequest("TodoList", sortedBy: [SortDescriptor("itemCount", ascending: false)])
        let counts = try store.read { r in try r.fetch(all).map { try r.value("itemCount", of: $0) } }
        #expect(counts == (0..<10).reversed().map { .int(Int64($0)) })
        let page = FetchRequest("TodoList", sortedBy: [SortDescriptor("searchName")], limit: 3, offset: 2)
        #expect(try store.read { try $0.fetchPlanDescription(page) }.contains("in order"))
        let names = try store.read { r in try r.fetch(page).map { try r.value("searchName", of: $0) } }
        let sorted = try store.read { r in try r.objects("TodoList").map { try r.value("searchName", of: $0) } }
            .sorted { Value.compare($0, $1)! < 0 }
        #expect(names == Array(sorted[2..<5]))
        #expect(try store.read { try $0.fetchCount(FetchRequest("Item", predicate: try Predicate(format: "title == 't0'"))) } == 15)
    }

    @Test func transientAttributesAreAClearErrorInStoredFetches() throws {
        let model = try Model {
            Entity("Person") {
                Attribute("first", .string)
                Attribute("fullName", .string, optional: true, transient: true)
            }
        }
        let store = try makeStore(model)
        _ = try store.write { tx in try tx.insert("Person", ["first": "Ada"]) }
        #expect(throws: StrataError.self) {
            _ = try store.read { try $0.fetch(FetchRequest("Person", predicate: try Predicate(format: "fullName == 'x'"))) }
        }
        #expect(throws: StrataError.self) {
            _ = try store.read { try $0.fetch(FetchRequest("Person", sortedBy: [SortDescriptor("fullName")])) }
        }
    }

    @Test func fetchesInsideAWriteSeeItsChanges() throws {
        let (store, lists) = try Self.populated()
        let n = try store.write { tx -> Int in
            try tx.insert("Item", ["title": "fresh", "list": lists[0]])
            return try tx.fetchCount(FetchRequest("Item", predicate: try Predicate(format: "title == 'fresh'")))
        }
        #expect(n == 1)
    }
}
