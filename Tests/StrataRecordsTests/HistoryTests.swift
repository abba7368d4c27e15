import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// Persistent history (FORMAT.md §12, "History"): what each commit records, tokens, purging,
/// turning it on and off, and the property replication rests on — the history alone rebuilds
/// the store's data.
@Suite struct HistoryTests {
    static func historyStore(_ fs: SimulatedFileSystem = SimulatedFileSystem(),
                             recording: HistoryRecording = .on) throws -> RecordStore {
        try makeStore(try todoModel(), fs: fs, path: "/db/history.strata", history: recording)
    }

    @Test func offUntilTurnedOn() throws {
        let store = try makeStore(try todoModel())
        defer { try? store.close() }
        _ = try store.write { try $0.insert("TodoList", ["name": "Home"]) }
        #expect(try !store.isRecordingHistory())
        #expect(try store.lastHistoryToken() == .start)
        #expect(try store.history().isEmpty)
        #expect(try store.read { tx in try tx.source.cursor(RecordTrees.history) } == nil)
    }

    @Test func eachCommitRecordsWhatItChanged() throws {
        let store = try Self.historyStore()
        defer { try? store.close() }
        let before = Date()
        let (list, milk) = try store.write { tx in
            tx.author = "importer"
            let list = try tx.insert("TodoList", ["name": "Café"])
            let milk = try tx.insert("Item", ["title": "Milk", "amount": Decimal(2), "list": list])
            return (list, milk)
        }
        try store.write { tx in try tx.update(milk, ["amount": Decimal(3)]) }
        try store.write { tx in try tx.delete(list) }  // cascades to the item
        let history = try store.history()
        #expect(history.map(\.token) == [HistoryToken(1), HistoryToken(2), HistoryToken(3)])
        #expect(try store.lastHistoryToken() == HistoryToken(3))
        #expect(history[0].author == "importer" && history[1].author == nil)
        #expect(history.allSatisfy { $0.date >= before.addingTimeInterval(-1) && $0.date <= Date() })
        #expect(Set(history.map(\.transactionID)).count == 3)

        let inserted = history[0].changes
        #expect(inserted.map(\.kind) == [.insert, .insert])
        let listInsert = try #require(inserted.first { $0.id == list })
        #expect(listInsert.values["name"] == .string("Café"))
        #expect(listInsert.values["itemCount"] == .int(1))        // derived, settled in the same commit
        #expect(listInsert.values["searchName"] == .string("cafe"))
        #expect(listInsert.derivedNames.isSuperset(of: ["itemCount", "total", "searchName"]))
        #expect(!listInsert.derivedNames.contains("name"))
        #expect(listInsert.values["averageWeight"] == nil)          // nil values are not listed on insert
        let itemInsert = try #require(inserted.first { $0.id == milk })
        #expect(itemInsert.toOneTargets["list"] == .some(list))
        #expect(itemInsert.values["listName"] == .string("Café"))

        let updated = history[1].changes
        let itemUpdate = try #require(updated.first { $0.id == milk })
        #expect(itemUpdate.kind == .update)
        #expect(Set(itemUpdate.values.keys) == ["amount", "lineTotal"])
        #expect(itemUpdate.values["amount"] == .decimal(3))
        let listUpdate = try #require(updated.first { $0.id == list })
        #expect(listUpdate.values["total"] == .decimal(3))
        #expect(listUpdate.derivedNames.contains("total"))
        #expect(listUpdate.values["name"] == nil)                   // unchanged properties are not listed

        let deleted = history[2].changes
        #expect(Set(deleted.map(\.id)) == [list, milk] && deleted.allSatisfy { $0.kind == .delete })
        #expect(deleted.allSatisfy { $0.values.isEmpty })           // nothing marked to keep
        #expect(try store.history(after: HistoryToken(1)).map(\.token) == [HistoryToken(2), HistoryToken(3)])
        #expect(try store.history(after: .start, limit: 2).count == 2)
        #expect(try store.history(after: HistoryToken(3)).isEmpty)
    }

    @Test func linksAndClearedToOnesAreRecorded() throws {
        let store = try Self.historyStore()
        defer { try? store.close() }
        let (list, tag, item) = try store.write { tx in
            let list = try tx.insert("TodoList", ["name": "A"])
            let tag = try tx.insert("Tag", ["label": "urgent"])
            let item = try tx.insert("Item", ["title": "x", "list": list])
            try tx.add(tag, to: "tags", of: list)
            return (list, tag, item)
        }
        try store.write { tx in
            try tx.remove(tag, from: "tags", of: list)
            try tx.set("list", of: item, to: nil)
        }
        let history = try store.history()
        let links = history[0].changes.filter { $0.kind == .link }
        #expect(links.count == 2)                                   // one from each side
        #expect(links.contains { $0.id == list && $0.relationship == "tags" && $0.other == tag })
        #expect(links.contains { $0.id == tag && $0.relationship == "lists" && $0.other == list })
        let second = history[1].changes
        #expect(second.filter { $0.kind == .unlink }.count == 2)
        let cleared = try #require(second.first { $0.id == item && $0.kind == .update })
        #expect(cleared.toOneTargets["list"] == .some(nil))
        #expect(cleared.values["listName"] == .null)
    }

    @Test func attributesMarkedPreservedStayInTheDeletesHistory() throws {
        let model = try Model {
            Entity("Account") {
                AttributeDescription("serverID", .string, preservedAfterDeletion: true)
                AttributeDescription("note", .string, optional: true)
            }
        }
        #expect(model.schemaLines.contains("  Account.serverID: attribute string preserved"))
        #expect(try StoredModel.parse(model.schemaLines).schemaLines == model.schemaLines)
        let store = try makeStore(model, path: "/db/p.strata", history: .on)
        defer { try? store.close() }
        let account = try store.write { try $0.insert("Account", ["serverID": "srv-7", "note": "n"]) }
        try store.write { try $0.delete(account) }
        let delete = try #require(try store.history().last?.changes.first)
        #expect(delete.kind == .delete && delete.values == ["serverID": .string("srv-7")])
        #expect(throws: StrataError.self) {
            _ = try Model { Entity("A") { AttributeDescription("t", .string, transient: true, preservedAfterDeletion: true) } }
        }
    }

    @Test func purgedHistoryIsReportedNotSkipped() throws {
        let store = try Self.historyStore()
        defer { try? store.close() }
        for index in 0..<5 { _ = try store.write { try $0.insert("TodoList", ["name": "L\(index)"]) } }
        #expect(try store.purgeHistory(through: HistoryToken(2)) == 2)
        #expect(try store.purgeHistory(through: HistoryToken(2)) == 0)
        #expect(try store.history(after: HistoryToken(2)).map(\.token.value) == [3, 4, 5])
        #expect(try store.history(after: HistoryToken(4)).map(\.token.value) == [5])
        for stale in [HistoryToken.start, HistoryToken(1)] {
            #expect {
                try store.history(after: stale)
            } throws: { error in
                guard case StrataError.historyPurged(let after, let purged) = error else { return false }
                return after == stale.value && purged == 2
            }
        }
        #expect(throws: StrataError.self) { try store.history(after: HistoryToken(99)) }
        // By date: everything committed before now goes; tokens go on from where they were.
        #expect(try store.purgeHistory(before: Date().addingTimeInterval(1)) == 3)
        #expect(try store.purgeHistory(before: Date()) == 0)
        _ = try store.write { try $0.insert("TodoList", ["name": "after"]) }
        #expect(try store.history(after: HistoryToken(5)).map(\.token.value) == [6])
        try expectConsistent(store)
    }

    @Test func turningHistoryOffAndOnMarksTheGap() throws {
        let fs = SimulatedFileSystem()
        do {
            let store = try Self.historyStore(fs)
            _ = try store.write { try $0.insert("TodoList", ["name": "a"]) }
            try store.close()
        }
        do {
            let store = try Self.historyStore(fs, recording: .off)
            #expect(try !store.isRecordingHistory())
            _ = try store.write { try $0.insert("TodoList", ["name": "unrecorded"]) }
            #expect(try store.lastHistoryToken() == HistoryToken(1))
            #expect(throws: StrataError.self) { try store.history(after: .start) }
            try store.close()
        }
        let store = try Self.historyStore(fs, recording: .on)
        defer { try? store.close() }
        // The consumer that saw token 1 missed the unrecorded insert: it must be told.
        #expect(throws: StrataError.self) { try store.history(after: HistoryToken(1)) }
        let resumed = try store.lastHistoryToken()
        _ = try store.write { try $0.insert("TodoList", ["name": "b"]) }
        #expect(try store.history(after: resumed).count == 1)
        // `.asStored` keeps recording; a read-only open cannot change the setting.
        try store.close()
        let again = try Self.historyStore(fs, recording: .asStored)
        #expect(try again.isRecordingHistory())
        try again.close()
        var readOnly = StoreOptions(durability: .normal)
        readOnly.fileSystem = fs
        readOnly.readOnly = true
        #expect(throws: StrataError.self) {
            try RecordStore(path: "/db/history.strata", model: try todoModel(), options: readOnly, history: .off)
        }
    }

    @Test func historySurvivesReopenAndCompaction() throws {
        let fs = SimulatedFileSystem()
        let store = try Self.historyStore(fs)
        for index in 0..<50 { _ = try store.write { try $0.insert("TodoList", ["name": "L\(index)"]) } }
        let before = try store.history()
        try store.storage.compact()
        try store.close()
        let reopened = try Self.historyStore(fs, recording: .asStored)
        defer { try? reopened.close() }
        #expect(try reopened.history() == before)
        try expectConsistent(reopened)
    }

    /// A damaged entry, a gap and a bad purge mark are each reported by the checker, and a read
    /// of the history throws `corrupt` rather than skip or invent a transaction.
    @Test func theCheckerAndReadersReportDamagedHistory() throws {
        let store = try Self.historyStore()
        defer { try? store.close() }
        for index in 0..<3 { _ = try store.write { try $0.insert("TodoList", ["name": "L\(index)"]) } }
        try store.storage.write { tx in
            try tx.tree(RecordTrees.history)!.put(KeyEncoding.primaryKey(2), [1, 2, 3])
        }
        var problems = try store.read { try $0.checkRecords() }
        #expect(problems.contains { $0.contains("history entry 2") }, "\(problems)")
        #expect(throws: StrataError.self) { try store.history() }
        #expect(try store.history(after: HistoryToken(2)).count == 1)
        try store.storage.write { tx in _ = try tx.tree(RecordTrees.history)!.delete(KeyEncoding.primaryKey(2)) }
        problems = try store.read { try $0.checkRecords() }
        #expect(problems.contains { $0.contains("lacks tokens 2...2") }, "\(problems)")
        #expect(throws: StrataError.self) { try store.history() }
        try store.storage.write { tx in
            try tx.tree(RecordTrees.meta)!.put(RecordTrees.historyPurgedKey, KeyEncoding.primaryKey(9))
        }
        problems = try store.read { try $0.checkRecords() }
        #expect(problems.contains { $0.contains("history:purged 9") }, "\(problems)")
        #expect(throws: StrataError.self) { try store.history() }
    }

    /// Tokens and marks are read from the file, so every arithmetic on them must hold for all
    /// 2^64 values: each edge value as a history key and as each meta mark, every operation
    /// (check, read, summary, purge, a commit, turning recording off) ends in a result or a
    /// `StrataError`, never a trap (the record fuzzer found `UInt64.max` as a key).
    @Test func everyEdgeTokenIsAnErrorOrAResultNeverATrap() throws {
        let edges: [UInt64] = [0, 1, 2, 3, 4, 5, UInt64(Int64.max), UInt64.max - 1, UInt64.max]
        let encodings: [[UInt8]] = edges.map { KeyEncoding.primaryKey($0) } + [[], [1], Array(repeating: 0xFF, count: 9)]
        var cases: [(String, (RecordTransaction) throws -> Void)] = []
        for key in encodings where !key.isEmpty {   // a tree key is 1...1024 bytes
            cases.append(("history key \(key)", { tx in
                try tx.tx.treeCreatingIfMissing(RecordTrees.history).put(key, [1, 2, 3])
            }))
        }
        for key in encodings {
            for mark in [RecordTrees.historyNextKey, RecordTrees.historyPurgedKey] {
                cases.append(("\(String(decoding: mark, as: UTF8.self)) = \(key)", { tx in
                    try tx.tx.tree(RecordTrees.meta)!.put(mark, key)
                }))
            }
        }
        for (label, forge) in cases {
            let store = try Self.historyStore()
            defer { try? store.close() }
            for index in 0..<3 { _ = try store.write { try $0.insert("TodoList", ["name": "L\(index)"]) } }
            try store.write { try forge($0) }
            let operations: [(String, () throws -> Void)] = [
                ("check", { _ = try store.read { try $0.checkRecords() } }),
                ("history", { _ = try store.history() }),
                ("history after 2", { _ = try store.history(after: HistoryToken(2)) }),
                ("history after max", { _ = try store.history(after: HistoryToken(UInt64.max)) }),
                ("summary", { _ = try store.read { try $0.historySummary() } }),
                ("commit", { _ = try store.write { try $0.insert("TodoList", ["name": "more"]) } }),
                ("purge to max", { try store.purgeHistory(through: HistoryToken(UInt64.max)) }),
                ("purge by date", { try store.purgeHistory(before: Date()) }),
                ("off", { _ = try store.write { try $0.setHistoryRecording(false) } }),
                ("on", { _ = try store.write { try $0.setHistoryRecording(true) } }),
            ]
            for (name, operation) in operations {
                do { try operation() } catch is StrataError {} catch {
                    Issue.record("\(label), \(name): \(error) is not a StrataError")
                }
            }
        }
    }

    /// FORMAT.md's example entry, byte for byte, both ways.
    @Test func theFormatDocumentsExampleEntry() throws {
        let model = try Model {
            Entity("TodoList") {
                AttributeDescription("name", .string)
                RelationshipDescription("items", toMany: "Item", inverse: "list")
                DerivedAttributeDescription("itemCount", .int64, "items.@count")
            }
            Entity("Item") { RelationshipDescription("list", toOne: "TodoList", inverse: "items") }
        }
        let tea = ObjectID(entity: "TodoList", primaryKey: 1)
        var changes = RecordChanges(transactionID: 3)
        changes.inserted = [.init(id: tea, values: [.string("Tea"), .int(0)], previous: nil, changedFields: [0, 1])]
        let date = Date(timeIntervalSinceReferenceDate: 788_918_400)
        let entry = try #require(HistoryCodec.encode(changes, model: model, date: date, author: "app"))
        let documented = """
            01 00 00 00 40 F8 82 C7 41 03 03 61 70 70 03 08 54 6F 64 6F 4C 69 73 74 04 6E 61 6D 65
            09 69 74 65 6D 43 6F 75 6E 74 01 01 00 01 02 01 00 05 03 54 65 61 02 01 02 00
            """.split(whereSeparator: \.isWhitespace).map { UInt8($0, radix: 16)! }
        #expect(entry == documented)
        let decoded = try documented.withUnsafeBytes { try HistoryCodec.decode($0, token: 1) }
        #expect(decoded == HistoryTransaction(token: HistoryToken(1), transactionID: 3, date: date, author: "app",
                                              changes: [HistoryChange(kind: .insert, id: tea,
                                                                      values: ["name": .string("Tea"), "itemCount": .int(0)],
                                                                      derivedNames: ["itemCount"])]))
        let format = try String(contentsOfFile: Self.root + "/FORMAT.md", encoding: .utf8)
        #expect(format.contains("`00 00 00 40 F8 82 C7 41`"), "FORMAT.md's example lost its date bytes")
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// Damaged entries decode to a `corrupt` error or to some entry, never a trap: every
    /// truncation of a real entry, and seeded random byte changes. The check's reader, which
    /// builds nothing, refuses exactly what decoding refuses, with the same error.
    @Test(arguments: [UInt64(7), 1_234_567]) func damagedEntriesNeverTrap(seed: UInt64) throws {
        let store = try Self.historyStore()
        defer { try? store.close() }
        try store.write { tx in
            tx.author = "damage"
            let list = try tx.insert("TodoList", ["name": "Ünïcode"])
            let tag = try tx.insert("Tag", ["label": "t"])
            try tx.insert("Item", ["title": "x", "amount": Decimal(string: "-12.345")!, "weight": 2.5, "list": list])
            try tx.add(tag, to: "tags", of: list)
        }
        let entry = try #require(try store.read { tx in try tx.source.get(RecordTrees.history, KeyEncoding.primaryKey(1)) })
        _ = try entry.withUnsafeBytes { try HistoryCodec.decode($0, token: 1) }
        func outcomes(_ bytes: [UInt8]) -> (decoded: String, validated: String) {
            func outcome(_ read: (UnsafeRawBufferPointer) throws -> Void) -> String {
                do { try bytes.withUnsafeBytes(read); return "entry" } catch { return "\(error)" }
            }
            return (outcome { _ = try HistoryCodec.decode($0, token: 1) }, outcome { try HistoryCodec.validate($0, token: 1) })
        }
        for length in 0..<entry.count {
            #expect(throws: StrataError.self) { try Array(entry[..<length]).withUnsafeBytes { try HistoryCodec.decode($0, token: 1) } }
            let (decoded, validated) = outcomes(Array(entry[..<length]))
            #expect(decoded == validated, "length \(length)")
        }
        #expect(outcomes(entry) == ("entry", "entry"))
        var rng = SplitMix64(seed: seed)
        for round in 0..<2_000 {
            var damaged = entry
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                damaged[Int(rng.next() % UInt64(damaged.count))] = UInt8(truncatingIfNeeded: rng.next())
            }
            let (decoded, validated) = outcomes(damaged)
            #expect(decoded == validated, "seed \(seed) round \(round)")
            do {
                _ = try damaged.withUnsafeBytes { try HistoryCodec.decode($0, token: 1) }
            } catch let error as StrataError {
                guard case .corrupt = error else {
                    Issue.record("seed \(seed) round \(round): \(error) is not corrupt")
                    return
                }
            }
        }
    }
}
