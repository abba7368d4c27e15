import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// One regression test per fetch defect found while hardening (type checks, index keys against
/// comparisons, and the key bounds checks); the classes they belong to are closed by
/// FetchTypeCheckTests and FetchDifferentialTests.
@Suite struct FetchRegressionTests {
    /// A comparison of a string attribute with a number returned no rows, though its documentation
    /// said a type mismatch is an error.
    @Test func aStringComparedWithANumberIsAnInvalidFetch() throws {
        let (store, _) = try FetchTests.populated()
        let message = invalidFetchMessage {
            _ = try store.read { try $0.fetch(FetchRequest("Item", predicate: PropertyPath("title") > 5)) }
        }
        #expect(message?.contains("title") == true, "\(String(describing: message))")
        #expect(message?.contains("string") == true, "\(String(describing: message))")
        #expect(message?.contains("integer") == true, "\(String(describing: message))")
    }

    /// A negative offset or limit sliced with a negative index (a trap), and a limit near
    /// `Int.max` overflowed `limit + offset` (a trap): found by the object layer's review.
    @Test func negativeOrHugeOffsetsAndLimitsNeverTrap() throws {
        let (store, _) = try FetchTests.populated()
        let all = try store.read { try $0.fetch(FetchRequest("Item")) }
        for (limit, offset) in [(Optional(-1), 0), (nil, -1), (Optional(1), -5), (Optional(Int.min), Int.min)] {
            for sorts in [[], [FetchSortDescriptor("title")]] {
                let request = FetchRequest("Item", sortedBy: sorts, limit: limit, offset: offset)
                #expect(invalidFetchMessage { _ = try store.read { try $0.fetch(request) } } != nil, "\(String(describing: limit)) \(offset)")
                #expect(invalidFetchMessage { _ = try store.read { try $0.fetchCount(request) } } != nil)
            }
        }
        for sorts in [[], [FetchSortDescriptor("title")]] {
            let huge = FetchRequest("Item", sortedBy: sorts, limit: Int.max, offset: 2)
            #expect(try store.read { try $0.fetch(huge) }.count == all.count - 2)
            let past = FetchRequest("Item", sortedBy: sorts, limit: Int.max, offset: Int.max)
            #expect(try store.read { try $0.fetch(past) }.isEmpty)
        }
    }

    /// An indexed equality compared key bytes, so the other spelling of a canonically equivalent
    /// string (NFC "é" against NFD "e" + U+0301) was missed, while a scan found it.
    @Test func indexedEqualityFindsCanonicallyEquivalentSpellings() throws {
        let store = try makeStore(try todoModel())
        let (nfc, nfd) = try store.write { tx in
            (try tx.insert("Item", ["title": "caf\u{E9}"]), try tx.insert("Item", ["title": "cafe\u{301}"]))
        }
        for spelling in ["caf\u{E9}", "cafe\u{301}"] {
            for predicate in [PropertyPath("title") == spelling, PropertyPath("title").in([spelling, "x"])] {
                let request = FetchRequest("Item", predicate: predicate)
                #expect(try store.read { try $0.fetchPlanDescription(request) }.contains("index:"))
                #expect(Set(try store.read { try $0.fetch(request) }) == [nfc, nfd], "\(predicate)")
            }
        }
        try expectConsistent(store)
    }

    /// Inside a write transaction derived values of changed rows are computed at commit, so
    /// the `canonical:(name)` index did not yet hold a list inserted there, and a
    /// `name BEGINSWITH[cd]` fetch that went through it missed the list a scan finds.
    @Test func aWriteTransactionsFoldedSearchSeesItsOwnInserts() throws {
        let (store, lists) = try FetchTests.populated()
        let request = FetchRequest("TodoList", predicate: try FetchPredicate(format: "name BEGINSWITH[cd] %@", "caf"))
        let (found, fresh) = try store.write { tx in
            let fresh = try tx.insert("TodoList", ["name": "Cafétéria"])
            return (Set(try tx.fetch(request)), fresh)
        }
        #expect(found == [lists[0], lists[1], lists[2], fresh])
    }

    /// A value longer than the index key's cut and an uncut value equal to its first bytes had the
    /// same key, so an index that decided `==` returned the long one too.
    @Test func anUncutConstantDoesNotMatchACutKey() throws {
        let store = try makeStore(try todoModel())
        let lengths = (KeyEncoding.maxValueBytes - 10)...(KeyEncoding.maxValueBytes + 10)
        let ids = try store.write { tx in
            try lengths.map { try tx.insert("Item", ["title": String(repeating: "a", count: $0)]) }
        }
        for (n, id) in zip(lengths, ids) {
            let request = FetchRequest("Item", predicate: PropertyPath("title") == String(repeating: "a", count: n))
            #expect(try store.read { try $0.fetch(request) } == [id], "\(n) bytes")
            #expect(try store.read { try $0.fetchCount(request) } == 1, "\(n) bytes")
        }
    }

    /// An index on (title, amount) orders ties of `title` by `amount`, not by primary key, so
    /// it cannot give the order of a sort by `title` alone (ties go by primary key).
    @Test func aCompositeIndexDoesNotGiveTheOrderOfItsFirstAttribute() throws {
        let model = try Model {
            Entity("Item") {
                AttributeDescription("title", .string)
                AttributeDescription("amount", .int64)
                FetchIndex("title", "amount")
            }
        }
        let store = try makeStore(model)
        let ids = try store.write { tx in
            try [3, 2, 1].map { try tx.insert("Item", ["title": "same", "amount": $0]) }
        }
        let request = FetchRequest("Item", sortedBy: [FetchSortDescriptor("title")])
        #expect(try store.read { try $0.fetch(request) } == ids)
    }

    /// Two long strings full of NULs in a two-column index made a key longer than the storage
    /// limit (each value was cut at 900 bytes before escaping doubled them), so the insert failed.
    @Test func longValuesInACompositeIndexFitTheKeyLimit() throws {
        let model = try Model {
            Entity("Blob") {
                AttributeDescription("a", .string)
                AttributeDescription("b", .binary)
                FetchIndex("a", "b")
                FetchIndex("b")
            }
        }
        let store = try makeStore(model)
        let a = String(repeating: "\u{0}", count: 700), b = [UInt8](repeating: 0, count: 700)
        let id = try store.write { tx in try tx.insert("Blob", ["a": a, "b": b]) }
        #expect(try store.read { try $0.fetch(FetchRequest("Blob", predicate: PropertyPath("a") == a)) } == [id])
        #expect(try store.read { try $0.fetch(FetchRequest("Blob", predicate: PropertyPath("b") == b)) } == [id])
        try expectConsistent(store)
    }

    /// Index keys read from the file were sliced `k[(k.count - 8)...]` with only debug-build
    /// bounds checks: a forged short key read out of bounds in a release build.
    @Test func aForgedShortIndexKeyIsCorrupt() throws {
        let store = try makeStore(try todoModel())
        _ = try store.write { tx in try tx.insert("Item", ["title": "a"]) }
        let equal = FetchRequest("Item", predicate: PropertyPath("title") == "a")
        let ordered = FetchRequest("Item", sortedBy: [FetchSortDescriptor("title")])
        for (forged, request) in [([KeyEncoding.tagValue, 0x61, 0, 1], equal), ([KeyEncoding.tagValue], ordered)] {
            try store.storage.write { tx in try tx.tree("index:Item:title")!.put(forged, []) }
            #expect {
                _ = try store.read { try $0.fetch(request) }
            } throws: { error in
                if case StrataError.corrupt = error { return true }
                return false
            }
            try store.storage.write { tx in _ = try tx.tree("index:Item:title")!.delete(forged) }
        }
        // A rows-tree key that is not 8 bytes long.
        try store.storage.write { tx in try tx.tree("rows:Item")!.put([1, 2, 3], []) }
        #expect {
            _ = try store.read { try $0.fetch(FetchRequest("Item")) }
        } throws: { error in
            if case StrataError.corrupt = error { return true }
            return false
        }
    }

    /// `CONTAINS` without options went to Foundation's `String.contains`, which on Linux trapped
    /// on some strings with NULs ("café\0" containing "\0\0", found by the differential test)
    /// and matched inside characters; it now compares whole characters itself.
    @Test func containsNeverTrapsAndMatchesWholeCharacters() throws {
        let object = TestObject(id: 1, [
            "nul": .value(.string("caf\u{E9}\u{0}")), "nfd": .value(.string("cafe\u{301}")), "crlf": .value(.string("a\r\nb")),
        ])
        let cases: [(String, String, Bool)] = [
            ("nul CONTAINS %@", "\u{0}\u{0}", false), ("nul CONTAINS %@", "\u{0}", true), ("nul CONTAINS %@", "e\u{301}\u{0}", true),
            ("nfd CONTAINS %@", "\u{301}", false), ("nfd CONTAINS %@", "\u{E9}", true), ("nfd CONTAINS %@", "cafe", false),
            ("crlf CONTAINS %@", "\r", false), ("crlf CONTAINS %@", "\r\n", true), ("crlf CONTAINS %@", "a\r", false),
            ("crlf CONTAINS[n] %@", "\r", true), ("nfd CONTAINS[n] %@", "\u{E9}", true),
        ]
        for (format, argument, expected) in cases {
            #expect(try FetchPredicate(format: format, argument).evaluate(object) == expected, "\(format) \(argument.unicodeScalars.map(\.value))")
        }
    }

    /// Sorting by a double: the index puts -0 with +0 and the extremes at the ends; the sort in
    /// memory must give the same order. NaN and ±∞ cannot be stored (they made the sort in
    /// memory call NaN greater and smaller than everything); the refusal is checked here too.
    @Test func sortingDoublesAgreesWithTheIndexOrder() throws {
        let model = try Model {
            Entity("Reading") {
                AttributeDescription("x", .double)
                AttributeDescription("y", .double)
                FetchIndex("x")
            }
        }
        let store = try makeStore(model)
        let values: [Double] = [1, -0.0, .greatestFiniteMagnitude, 0, -.greatestFiniteMagnitude, -1, 2,
                                .leastNonzeroMagnitude, -.leastNonzeroMagnitude, 0.0]
        try store.write { tx in for v in values { try tx.insert("Reading", ["x": v, "y": v]) } }
        for v in [Double.nan, -.nan, .infinity, -.infinity] {
            #expect(throws: StrataError.self, "\(v)") { try store.write { tx in try tx.insert("Reading", ["x": v, "y": 0.0]) } }
        }
        let byIndex = try store.read { r in try r.fetch(FetchRequest("Reading", sortedBy: [FetchSortDescriptor("x")])) }
        let inMemory = try store.read { r in try r.fetch(FetchRequest("Reading", sortedBy: [FetchSortDescriptor("y")])) }
        #expect(byIndex == inMemory)
    }
}

/// Stores written before record format 2 keyed strings by their bytes as given and lowercased
/// without Final_Sigma: opening one read-write rebuilds its keys and derived values.
@Suite struct KeyFormatUpgradeTests {
    /// A string key as format 1 wrote it: the bytes as given, cut after 900 of them.
    static func formatOneKey(_ s: String, pk: UInt64) -> [UInt8] {
        var out: [UInt8] = [KeyEncoding.tagValue]
        for b in s.utf8.prefix(900) {
            out.append(b)
            if b == 0 { out.append(0xFF) }
        }
        return out + [0, 1] + KeyEncoding.primaryKey(pk)
    }

    @Test func aFormatOneStoreIsRebuiltWhenOpenedReadWrite() throws {
        let fs = SimulatedFileSystem()
        let model = try todoModel()
        let titles = ["caf\u{E9}", "cafe\u{301}", "\u{39F}\u{394}\u{39F}\u{3A3}", "plain"]
        let items = try {
            let store = try makeStore(model, fs: fs)
            defer { try? store.close() }
            let items = try store.write { tx in try titles.map { try tx.insert("Item", ["title": $0]) } }
            // Turn it into a format-1 store: no marker, byte keys, the stdlib's lowercase.
            let e = model.entity("Item")!
            let title = e.fieldIndex["title"]!, lower = e.fieldIndex["lowerTitle"]!
            try store.storage.write { tx in
                _ = try tx.tree("records:meta")!.delete(KeyFormat.metaKey)
                let index = try tx.tree("index:Item:title")!
                let rows = try tx.tree("rows:Item")!
                for id in items {
                    let key = KeyEncoding.primaryKey(id.primaryKey)
                    var row = try RowCodec.decode(try rows.get(key)!, fields: e.fields)
                    guard case .string(let s) = row[title] else { continue }
                    _ = try index.delete(KeyEncoding.indexKey([row[title]], pk: id.primaryKey))
                    try index.put(Self.formatOneKey(s, pk: id.primaryKey), [])
                    row[lower] = .string(s.lowercased())
                    try rows.put(key, RowCodec.encode(row, fields: e.fields))
                }
            }
            #expect(try KeyFormat.version(store.storage) == 1)
            #expect(try !store.read { try $0.checkRecords() }.isEmpty, "the forged format-1 keys should differ")
            return items
        }()
        // Read-only, its indexes would answer differently from scans: refused.
        var readOnly = StoreOptions(durability: .normal)
        readOnly.fileSystem = fs
        readOnly.readOnly = true
        #expect {
            _ = try RecordStore(path: "/db/records.strata", model: model, options: readOnly)
        } throws: { error in
            if case StrataError.readOnly(let reason) = error { return reason.contains("format 1") }
            return false
        }
        // Read-write: rebuilt, marked, and fetches find both spellings.
        let store = try makeStore(model, fs: fs)
        #expect(try KeyFormat.version(store.storage) == KeyFormat.current)
        try expectConsistent(store)
        #expect(try store.value("lowerTitle", of: items[2]) == .string("\u{3BF}\u{3B4}\u{3BF}\u{3C2}"))
        let request = FetchRequest("Item", predicate: PropertyPath("title") == "caf\u{E9}")
        #expect(Set(try store.read { try $0.fetch(request) }) == [items[0], items[1]])
        // A newer format is refused.
        try store.storage.write { tx in try tx.tree("records:meta")!.put(KeyFormat.metaKey, [KeyFormat.current + 1]) }
        try store.close()
        #expect(throws: StrataError.unsupportedFormatVersion(found: UInt32(KeyFormat.current) + 1, supported: UInt32(KeyFormat.current))) {
            _ = try makeStore(model, fs: fs)
        }
    }

    /// A format-2 store held an entry per word and row (the word, `00`, the key; the counts as
    /// varints), a block of one posting each: opened read-only it is read as it is; read-write
    /// its word index is rebuilt as full blocks; searches answer alike throughout.
    @Test func aFormatTwoWordIndexIsReadThenRebuiltAsBlocks() throws {
        let fs = SimulatedFileSystem()
        let model = try PostingBlockTests.notesModel()
        let tree = "words:Note:title,body"
        let notes = [("café crème", "crème brûlée"), ("tree of pages", nil), ("a page log", "pages and pages")]
        do {
            let store = try makeStore(model, fs: fs)
            defer { try? store.close() }
            try store.write { tx in
                for (title, body) in notes { _ = try tx.insert("Note", ["title": title, "body": body.map { StoredValue.string($0) } ?? .null]) }
            }
            // Written back as format 2 wrote it: one entry per word and row.
            try store.storage.write { tx in
                let words = try tx.tree(tree)!
                for (key, _) in try words.entries() { _ = try words.delete(key) }
                for (i, note) in notes.enumerated() {
                    let row: [StoredValue] = [.string(note.0), note.1.map { .string($0) } ?? .null]
                    let terms = WordIndex.terms(row, fields: [0, 1], folding: WordFolding())
                    for (word, slot) in terms.slots {
                        try words.put(WordIndex.key(word, pk: UInt64(i + 1)), terms.counts(ofSlot: slot).map { UInt8($0) })
                    }
                }
                try tx.tree("records:meta")!.put(KeyFormat.metaKey, [2])
            }
        }
        func searched(_ store: RecordStore) throws -> [[UInt64]] {
            try store.read { r in
                [try r.search(TextSearch("Note", matching: "page*")).map(\.id.primaryKey),
                 try r.search(TextSearch("Note", matching: "creme", in: ["body"])).map(\.id.primaryKey),
                 try r.fetch(FetchRequest("Note", predicate: try FetchPredicate(format: "{title, body} CONTAINSWORDS 'page*'")))
                    .map(\.primaryKey)]
            }
        }
        let expected: [[UInt64]] = [[3, 2], [1], [2, 3]]
        var readOnly = StoreOptions(durability: .normal)
        readOnly.fileSystem = fs
        readOnly.readOnly = true
        let reader = try RecordStore(path: "/db/records.strata", model: model, options: readOnly)
        #expect(try KeyFormat.version(reader.storage) == 2)
        #expect(try reader.read { try $0.checkRecords() }.isEmpty)
        #expect(try searched(reader) == expected)
        let entriesBefore = try reader.storage.read { try $0.tree(tree)!.entries().count }
        try reader.close()
        let store = try makeStore(model, fs: fs)
        #expect(try KeyFormat.version(store.storage) == KeyFormat.current)
        #expect(try store.read { try $0.checkRecords() }.isEmpty)
        #expect(try searched(store) == expected)
        // Words held by more than one note now share a block.
        #expect(try store.storage.read { try $0.tree(tree)!.entries().count } < entriesBefore)
        try store.close()
    }

    /// A format-3 store (blocks, no change entries) is read as it is, read-only; opened
    /// read-write it records format 4 without touching its blocks, and its next commits write
    /// batches of recent changes that searches apply.
    @Test func aFormatThreeStoreIsReadAsIsAndTakesBatches() throws {
        let fs = SimulatedFileSystem()
        let model = try PostingBlockTests.notesModel()
        let tree = "words:Note:title,body"
        do {
            let store = try makeStore(model, fs: fs)
            defer { try? store.close() }
            // One large commit: merged into blocks at once, as format 3 held them.
            try store.write { tx in
                for i in 0..<2_000 { _ = try tx.insert("Note", ["title": "page \(i)", "body": i % 2 == 0 ? "even pages" : "odd"]) }
            }
            #expect(try store.read { try $0.recentBatches(tree, fieldCount: 2) }.isEmpty)
            try store.storage.write { tx in try tx.tree("records:meta")!.put(KeyFormat.metaKey, [3]) }
        }
        var readOnly = StoreOptions(durability: .normal)
        readOnly.fileSystem = fs
        readOnly.readOnly = true
        let reader = try RecordStore(path: "/db/records.strata", model: model, options: readOnly)
        #expect(try KeyFormat.version(reader.storage) == 3)
        #expect(try reader.read { try $0.search(TextSearch("Note", matching: "even")) }.count == 1_000)
        let entriesBefore = try reader.storage.read { try $0.tree(tree)!.entries() }
        try reader.close()
        let store = try makeStore(model, fs: fs)
        #expect(try KeyFormat.version(store.storage) == 4)
        #expect(try store.storage.read { try $0.tree(tree)!.entries() }.elementsEqual(entriesBefore) { $0.key == $1.key && $0.value == $1.value })
        try store.write { tx in _ = try tx.insert("Note", ["title": "even newer", "body": nil as String?]) }
        #expect(try store.read { try $0.recentBatches(tree, fieldCount: 2) }.count == 1)
        #expect(try store.read { try $0.search(TextSearch("Note", matching: "even")) }.count == 1_001)
        #expect(try store.read { try $0.checkRecords() }.isEmpty)
        try store.close()
    }
}
