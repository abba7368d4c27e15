import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// `checkRecords()` verifies every structure a record store keeps (FORMAT.md §12): each test
/// below forges exactly one kind of damage under the record layer, with the storage engine's
/// writer (every checksum valid), and expects a problem naming the damaged tree or field. The
/// last tests run random transactions over a model with every derived form and relationship
/// and demand that a sound store reports nothing, inside transactions and after commits.
@Suite struct RecordCheckerTests {
    /// A small sound TodoList store: two lists with items (amounts, weights), two tags linked
    /// to the lists.
    struct Fixture {
        let store: RecordStore
        let lists: [ObjectID]
        let items: [ObjectID]
        let tags: [ObjectID]

        init() throws {
            store = try makeStore(try todoModel())
            (lists, items, tags) = try store.write { tx -> ([ObjectID], [ObjectID], [ObjectID]) in
                let lists = [try tx.insert("TodoList", ["name": "Groceries"]), try tx.insert("TodoList", ["name": "Tools"])]
                var items: [ObjectID] = []
                for i in 0..<6 {
                    items.append(try tx.insert("Item", ["title": "item \(i)", "amount": Decimal(i * 3 + 1), "quantity": i + 1,
                                                        "weight": Double(i) * 1.25, "list": lists[i % 2]]))
                }
                let tags = [try tx.insert("Tag", ["label": "home"]), try tx.insert("Tag", ["label": "work"])]
                try tx.add(tags[0], to: "tags", of: lists[0])
                try tx.add(tags[0], to: "tags", of: lists[1])
                try tx.add(tags[1], to: "tags", of: lists[1])
                return (lists, items, tags)
            }
            let clean = try store.read { try $0.checkRecords() }
            #expect(clean.isEmpty, "the fixture is not sound: \(clean)")
        }

        var problems: [String] { get throws { try store.read { try $0.checkRecords() } } }

        func put(_ tree: String, _ key: [UInt8], _ value: [UInt8] = []) throws {
            try store.storage.write { tx in try tx.treeCreatingIfMissing(tree).put(key, value) }
        }

        func delete(_ tree: String, _ key: [UInt8]) throws {
            let removed = try store.storage.write { tx in try tx.tree(tree)!.delete(key) }
            #expect(removed, "\(tree): no such key to remove")
        }

        /// The entries of a tree, in key order.
        func entries(_ tree: String) throws -> [([UInt8], [UInt8])] {
            try store.storage.read { tx in
                var out: [([UInt8], [UInt8])] = []
                guard let c = try tx.tree(tree)?.makeCursor() else { return out }
                var ok = try c.first()
                while ok {
                    out.append(([UInt8](c.key), try c.copyValue()))
                    ok = try c.next()
                }
                return out
            }
        }

        /// Rewrites one field of a stored row (by the row codec, so the row itself decodes).
        func forgeField(_ id: ObjectID, _ field: String, _ value: StoredValue) throws {
            let e = store.model.entity(id.entity)!
            var r = try store.read { try $0.row(RowKey(entity: e.index, pk: id.primaryKey)) }!
            r[e.fieldIndex[field]!] = value
            try put("rows:\(e.name)", KeyEncoding.primaryKey(id.primaryKey), RowCodec.encode(r, fields: e.fields))
        }

        /// Expects a problem that mentions every one of `words`.
        func expectReported(_ words: String..., sourceLocation: SourceLocation = #_sourceLocation) throws {
            let found = try problems
            #expect(found.contains { p in words.allSatisfy { p.contains($0) } },
                    "no problem mentions \(words); checkRecords found \(found)", sourceLocation: sourceLocation)
        }
    }

    static func uniqueKey(_ s: String) -> [UInt8] {
        var k: [UInt8] = []
        KeyEncoding.append(.string(s), to: &k)
        return k
    }

    // MARK: @min/@max bookkeeping

    @Test func extremesEntryMissing() throws {
        let f = try Fixture()
        let entries = try f.entries("extremes:TodoList:dearest")
        #expect(entries.count == 6)
        try f.delete("extremes:TodoList:dearest", entries[2].0)
        try f.expectReported("extremes:TodoList:dearest", "missing")
    }

    @Test func extremesEntryNoRowAccountsFor() throws {
        let f = try Fixture()
        // A child value no item has, under a real list and a real item.
        var key = KeyEncoding.primaryKey(f.lists[0].primaryKey)
        KeyEncoding.append(.decimal(999), to: &key)
        try f.put("extremes:TodoList:cheapest", key + KeyEncoding.primaryKey(f.items[0].primaryKey))
        try f.expectReported("extremes:TodoList:cheapest", "no row accounts for")
    }

    @Test func extremesEntryUnderTheWrongParent() throws {
        let f = try Fixture()
        let (key, _) = try f.entries("extremes:TodoList:dearest")[0]
        try f.delete("extremes:TodoList:dearest", key)
        let other = f.lists[0].primaryKey == KeyEncoding.decodePrimaryKey(key) ? f.lists[1] : f.lists[0]
        try f.put("extremes:TodoList:dearest", KeyEncoding.primaryKey(other.primaryKey) + key.dropFirst(8))
        try f.expectReported("extremes:TodoList:dearest", "missing")
        try f.expectReported("extremes:TodoList:dearest", "no row accounts for")
    }

    @Test func extremesEntryWithAValue() throws {
        let f = try Fixture()
        let (key, _) = try f.entries("extremes:TodoList:dearest")[0]
        try f.put("extremes:TodoList:dearest", key, [1])
        try f.expectReported("extremes:TodoList:dearest", "value")
    }

    // MARK: Uniqueness

    @Test func uniqueEntryMissing() throws {
        let f = try Fixture()
        try f.delete("unique:Tag:label", Self.uniqueKey("work"))
        try f.expectReported("unique:Tag:label", "missing")
    }

    @Test func uniqueEntryNoRowAccountsFor() throws {
        let f = try Fixture()
        try f.put("unique:Tag:label", Self.uniqueKey("nobody"), KeyEncoding.primaryKey(f.tags[0].primaryKey))
        try f.expectReported("unique:Tag:label", "no row accounts for")
    }

    /// The fuzz finding behind CI's case 13739 (seed 20261122): the entry's key is right but its
    /// value names another primary key, which the checker never read.
    @Test(arguments: [0, 999, UInt64.max])
    func uniqueEntryNamesTheWrongRow(owner: UInt64) throws {
        let f = try Fixture()
        try f.put("unique:Tag:label", Self.uniqueKey("work"), KeyEncoding.primaryKey(owner))
        try f.expectReported("unique:Tag:label", "Tag/\(owner)", "Tag/\(f.tags[1].primaryKey)")
    }

    @Test func uniqueEntryOfTheWrongLength() throws {
        let f = try Fixture()
        try f.put("unique:Tag:label", Self.uniqueKey("work"), [1, 2, 3])
        try f.expectReported("unique:Tag:label", "3 bytes")
    }

    @Test func twoRowsBreakingAUniquenessConstraint() throws {
        let f = try Fixture()
        try f.forgeField(f.tags[1], "label", .string("home"))
        try f.expectReported("break the uniqueness (label)")
    }

    // MARK: Auxiliary fields of the derivation engine

    @Test(arguments: [("_averageWeight.sum", StoredValue.double(1e6)), ("_averageWeight.compensation", .double(0.5)),
                      ("_averageWeight.count", .int(99)), ("_weightSum.sum", .double(-3)), ("_weightSum.compensation", .double(7)),
                      ("_averageAmount.sum", .decimal(12345)), ("_averageAmount.count", .int(0))])
    func auxiliaryFieldForged(field: String, value: StoredValue) throws {
        let f = try Fixture()
        try f.forgeField(f.lists[0], field, value)
        try f.expectReported("TodoList/\(f.lists[0].primaryKey)", field)
    }

    @Test func auxiliaryFieldMissing() throws {
        let f = try Fixture()
        try f.forgeField(f.lists[1], "_averageWeight.count", .null)
        try f.expectReported("TodoList/\(f.lists[1].primaryKey)", "_averageWeight.count")
    }

    /// A derived value that disagrees with its own running sum, though the running sum is right.
    @Test func derivedValueAgainstItsRunningSum() throws {
        let f = try Fixture()
        try f.forgeField(f.lists[0], "weightSum", .double(123.5))
        try f.expectReported("TodoList/\(f.lists[0].primaryKey).weightSum")
    }

    @Test func rowLocalDerivedValueForged() throws {
        let f = try Fixture()
        try f.forgeField(f.items[3], "listName", .string("Elsewhere"))
        try f.expectReported("Item/\(f.items[3].primaryKey).listName")
    }

    // MARK: Primary-key counters

    @Test(arguments: [UInt64(1), 2, 0])
    func counterAtOrBelowAKeyInUse(next: UInt64) throws {
        let f = try Fixture()
        try f.put("records:meta", Array("next:TodoList".utf8), KeyEncoding.primaryKey(next))
        try f.expectReported("next:TodoList", "not above the largest key in use")
    }

    @Test func counterMissingOrMisshapen() throws {
        let f = try Fixture()
        try f.delete("records:meta", Array("next:Item".utf8))
        try f.expectReported("no key counter next:Item")
        try f.put("records:meta", Array("next:Item".utf8), [0, 1])
        try f.expectReported("next:Item", "2 bytes")
        // The last key of the store's range (range 0 here) is never handed out; past the range
        // a counter would hand out another store's keys (FORMAT.md §12, "Primary-key ranges").
        try f.put("records:meta", Array("next:Item".utf8), KeyEncoding.primaryKey(PrimaryKeyRange.initial.upperBound - 1))
        try f.expectReported("next:Item", "exhausted")
        try f.put("records:meta", Array("next:Item".utf8), KeyEncoding.primaryKey(.max))
        try f.expectReported("next:Item", "outside the store's key range 0")
    }

    @Test func metaKeysTheModelDoesNotExplain() throws {
        let f = try Fixture()
        try f.put("records:meta", Array("next:Nobody".utf8), KeyEncoding.primaryKey(3))
        try f.expectReported("next:Nobody")
        try f.put("records:meta", Array("stray".utf8), [1])
        try f.expectReported("records:meta", "stray")
    }

    // MARK: Inverse and join trees

    @Test func inverseEntryMissingOrStray() throws {
        let f = try Fixture()
        let pair = RecordTrees.pair(f.lists[0].primaryKey, f.items[0].primaryKey)
        try f.delete("inverse:Item:list", pair)
        try f.expectReported("inverse:Item:list", "missing")
        try f.put("inverse:Item:list", pair)
        #expect(try f.problems.isEmpty)
        // The item listed under the other list too: its list field says otherwise.
        try f.put("inverse:Item:list", RecordTrees.pair(f.lists[1].primaryKey, f.items[0].primaryKey))
        try f.expectReported("inverse:Item:list", "no row accounts for")
    }

    @Test func inverseEntryWithAValue() throws {
        let f = try Fixture()
        try f.put("inverse:Item:list", RecordTrees.pair(f.lists[0].primaryKey, f.items[0].primaryKey), [0])
        try f.expectReported("inverse:Item:list", "value")
    }

    @Test func joinEntryOnOneSideOnly() throws {
        let f = try Fixture()
        try f.delete("join:Tag:lists", RecordTrees.pair(f.tags[1].primaryKey, f.lists[1].primaryKey))
        try f.expectReported("join:TodoList:tags", "no entry in join:Tag:lists")
        let g = try Fixture()
        try g.delete("join:TodoList:tags", RecordTrees.pair(g.lists[0].primaryKey, g.tags[0].primaryKey))
        try g.expectReported("join:Tag:lists", "no entry in join:TodoList:tags")
    }

    @Test func joinEntryToARowThatDoesNotExist() throws {
        let f = try Fixture()
        try f.put("join:TodoList:tags", RecordTrees.pair(f.lists[0].primaryKey, 999))
        try f.put("join:Tag:lists", RecordTrees.pair(999, f.lists[0].primaryKey))
        try f.expectReported("join:TodoList:tags", "does not exist")
        try f.expectReported("join:Tag:lists", "does not exist")
    }

    // MARK: Fetch indexes

    @Test func indexEntryMissingOrStray() throws {
        let f = try Fixture()
        let key = KeyEncoding.indexKey([.string("item 2")], pk: f.items[2].primaryKey)
        try f.delete("index:Item:title", key)
        try f.expectReported("index:Item:title", "missing")
        try f.put("index:Item:title", KeyEncoding.indexKey([.string("item 2")], pk: 999))
        try f.expectReported("index:Item:title", "no row accounts for")
    }

    // MARK: Trees and rows

    @Test(arguments: ["rows:Nobody", "index:Item:nothing", "extremes:TodoList:dearestx", "join:Tag:nothing", "unique:Tag:name",
                      "inverse:Item:owner", "records:other"])
    func treeNoEntityExplains(name: String) throws {
        let f = try Fixture()
        try f.put(name, KeyEncoding.primaryKey(1))
        try f.expectReported("tree \(name)", "belongs to nothing in the model")
    }

    /// A whole bookkeeping tree renamed (fuzz cases 9537, 3009): its entries are missing and the
    /// new name belongs to nothing.
    @Test func extremesTreeRenamed() throws {
        let f = try Fixture()
        let entries = try f.entries("extremes:TodoList:dearest")
        try f.store.storage.write { tx in
            try tx.dropTree("extremes:TodoList:dearest")
            let t = try tx.treeCreatingIfMissing("rows:Nobody")
            for (k, v) in entries { try t.put(k, v) }
        }
        try f.expectReported("extremes:TodoList:dearest", "6 entries missing")
        try f.expectReported("tree rows:Nobody")
    }

    @Test func rowValuesThatNoWriterStores() throws {
        let f = try Fixture()
        try f.forgeField(f.items[0], "quantity", .int(1 << 40))
        try f.expectReported("Item/\(f.items[0].primaryKey).quantity", "does not fit int32")
        try f.forgeField(f.items[1], "title", .null)
        try f.expectReported("Item/\(f.items[1].primaryKey).title", "required")
        try f.forgeField(f.items[2], "list", .int(999))
        try f.expectReported("Item/\(f.items[2].primaryKey).list", "does not exist")
    }

    @Test func rowBytesThatAreNotTheCodecsSpelling() throws {
        let f = try Fixture()
        let key = KeyEncoding.primaryKey(f.tags[0].primaryKey)
        let stored = try f.store.storage.read { try $0.tree("rows:Tag")!.get(key) }!
        try f.put("rows:Tag", key, stored + [0, 0, 0])
        try f.expectReported("Tag/\(f.tags[0].primaryKey)")
    }

    // MARK: Sound stores report nothing

    /// Every derived form over both kinds of to-many, each sum kind into each declared kind
    /// (the auxiliary fields of FORMAT.md §12), copies through two hops, derived over derived,
    /// string extremes, a two-attribute index and uniqueness constraint, a self-referencing
    /// many-to-many.
    static func everyFormModel() throws -> Model {
        try Model {
            Entity("Group") {
                AttributeDescription("name", .string)
                RelationshipDescription("members", toMany: "Member", inverse: "group", deleteRule: .cascade)
                RelationshipDescription("badges", toMany: "Badge", inverse: "groups")
                DerivedAttributeDescription("memberCount", .int64, "members.@count")
                DerivedAttributeDescription("scoreSum", .int64, "members.score.@sum")
                DerivedAttributeDescription("scoreSumAsDouble", .double, "members.score.@sum")
                DerivedAttributeDescription("scoreSumAsDecimal", .decimal, "members.score.@sum")
                DerivedAttributeDescription("scoreAvg", .double, "members.score.@avg", optional: true)
                DerivedAttributeDescription("scoreAvgAsDecimal", .decimal, "members.score.@avg", optional: true)
                DerivedAttributeDescription("priceSum", .decimal, "members.price.@sum")
                DerivedAttributeDescription("priceSumAsDouble", .double, "members.price.@sum")
                DerivedAttributeDescription("priceAvg", .decimal, "members.price.@avg", optional: true)
                DerivedAttributeDescription("heightSum", .double, "members.height.@sum")
                DerivedAttributeDescription("heightSumAsDecimal", .decimal, "members.height.@sum")
                DerivedAttributeDescription("heightAvg", .double, "members.height.@avg", optional: true)
                DerivedAttributeDescription("minHeight", .double, "members.height.@min", optional: true)
                DerivedAttributeDescription("maxPrice", .decimal, "members.price.@max", optional: true)
                DerivedAttributeDescription("lastNick", .string, "members.nick.@max", optional: true)
                DerivedAttributeDescription("firstJoined", .date, "members.joined.@min", optional: true)
                DerivedAttributeDescription("doubledSum", .int64, "members.doubled.@sum")
                DerivedAttributeDescription("badgeCount", .int64, "badges.@count")
                DerivedAttributeDescription("badgeWeight", .double, "badges.weight.@sum")
                DerivedAttributeDescription("badgeWeightAvg", .double, "badges.weight.@avg", optional: true)
                DerivedAttributeDescription("badgeLevelMax", .int64, "badges.level.@max", optional: true)
                DerivedAttributeDescription("badgeLevelAvg", .decimal, "badges.level.@avg", optional: true)
                DerivedAttributeDescription("folded", .string, "canonical:(name)")
                DerivedAttributeDescription("touched", .date, "now()")
                FetchIndex("folded")
            }
            Entity("Member") {
                AttributeDescription("nick", .string)
                AttributeDescription("score", .int32, default: 0)
                AttributeDescription("price", .decimal, default: Decimal(0))
                AttributeDescription("height", .double, optional: true)
                AttributeDescription("joined", .date, optional: true)
                RelationshipDescription("group", toOne: "Group", inverse: "members")
                RelationshipDescription("mentor", toOne: "Member", inverse: "mentees")
                RelationshipDescription("mentees", toMany: "Member", inverse: "mentor")
                DerivedAttributeDescription("groupName", .string, "group.name", optional: true)
                DerivedAttributeDescription("groupFolded", .string, "group.folded", optional: true)
                DerivedAttributeDescription("mentorGroup", .string, "mentor.group.name", optional: true)
                DerivedAttributeDescription("doubled", .int64, "score * 2")
                DerivedAttributeDescription("loud", .string, "uppercase:(nick)")
                DerivedAttributeDescription("menteeCount", .int64, "mentees.@count")
                Unique("nick", "score")
                FetchIndex("score", "nick")
            }
            Entity("Badge") {
                AttributeDescription("title", .string)
                AttributeDescription("weight", .double, default: 1.0)
                AttributeDescription("level", .int16, default: 1)
                RelationshipDescription("groups", toMany: "Group", inverse: "badges")
                RelationshipDescription("peers", toMany: "Badge", inverse: "peers")
                DerivedAttributeDescription("groupCount", .int64, "groups.@count")
                DerivedAttributeDescription("groupMembers", .int64, "groups.memberCount.@sum")
                DerivedAttributeDescription("peerCount", .int64, "peers.@count")
                Unique("title")
            }
        }
    }

    /// Random transactions (inserts, updates, moves, links, unlinks, deletes with cascades,
    /// awkward doubles and decimals, canonically equivalent spellings, rollbacks): the check
    /// inside each transaction and after each commit finds nothing.
    @Test(arguments: [UInt64(0xC4EC_0001), 0xC4EC_0002])
    func soundStoresReportNothing(seed: UInt64) throws {
        let store = try makeStore(try Self.everyFormModel())
        var rng = SplitMix64(seed: seed)
        let nicks = ["ada", "Ada", "caf\u{E9}", "cafe\u{301}", "zo\u{EB}", "", "x"]
        let heights: [Double?] = [nil, 0, -0.0, 1e-100, 0.1, 0.2, 0.3, 1.75, -2.5, 1e15, 1e-15, 123456.789]
        let prices: [Decimal] = [0, 1, Decimal(string: "0.01")!, Decimal(string: "-12.345")!, Decimal(string: "99999999999.99999")!, 7]
        for t in 0..<120 {
            let label = "seed \(seed) transaction \(t)"
            do {
                try store.write { tx in
                    let groups = try tx.objects("Group"), members = try tx.objects("Member"), badges = try tx.objects("Badge")
                    for _ in 0..<rng.int(1...6) {
                        switch rng.below(10) {
                        case 0:
                            try tx.insert("Group", ["name": nicks[rng.below(nicks.count)] + " \(t)"])
                        case 1, 2:
                            var values: [String: any ValueConvertible] = ["nick": nicks[rng.below(nicks.count)] + "\(rng.below(1000))",
                                                                          "score": rng.int(-50...50), "price": prices[rng.below(prices.count)]]
                            if let h = heights[rng.below(heights.count)] { values["height"] = h }
                            if rng.chance(0.5) { values["joined"] = Date(timeIntervalSinceReferenceDate: Double(rng.below(1_000_000))) }
                            if let g = groups.randomElement(using: &rng), try tx.exists(g) { values["group"] = g }
                            if let m = members.randomElement(using: &rng), rng.chance(0.4), try tx.exists(m) { values["mentor"] = m }
                            try tx.insert("Member", values)
                        case 3:
                            try tx.insert("Badge", ["title": "badge \(t) \(rng.below(1000))", "weight": heights[rng.below(heights.count)] ?? 2.5,
                                                    "level": rng.int(-5...5)])
                        case 4:
                            guard let m = members.randomElement(using: &rng), try tx.exists(m) else { break }
                            var values: [String: any ValueConvertible] = [:]
                            switch rng.below(5) {
                            case 0: values["score"] = rng.int(-50...50)
                            case 1: values["height"] = heights[rng.below(heights.count)].map { $0 as any ValueConvertible } ?? StoredValue.null
                            case 2: values["price"] = prices[rng.below(prices.count)]
                            case 3:
                                let g = groups.randomElement(using: &rng)
                                values["group"] = try g.flatMap { try tx.exists($0) ? $0 : nil }.map { $0 as any ValueConvertible } ?? StoredValue.null
                            default: values["nick"] = nicks[rng.below(nicks.count)] + "\(rng.below(1000))"
                            }
                            try tx.update(m, values)
                        case 5:
                            guard let g = groups.randomElement(using: &rng), try tx.exists(g) else { break }
                            try tx.update(g, ["name": nicks[rng.below(nicks.count)]])
                        case 6:
                            guard let g = groups.randomElement(using: &rng), let b = badges.randomElement(using: &rng),
                                  try tx.exists(g), try tx.exists(b) else { break }
                            if rng.chance(0.7) { try tx.add(b, to: "badges", of: g) } else { try tx.remove(b, from: "badges", of: g) }
                        case 7:
                            guard let a = badges.randomElement(using: &rng), let b = badges.randomElement(using: &rng),
                                  try tx.exists(a), try tx.exists(b) else { break }
                            if rng.chance(0.7) { try tx.add(b, to: "peers", of: a) } else { try tx.remove(b, from: "peers", of: a) }
                        case 8:
                            let all = groups + members + badges
                            guard let victim = all.randomElement(using: &rng), try tx.exists(victim) else { break }
                            // Members are mentors too: nullify their mentees (the default rule).
                            try tx.delete(victim)
                        default:
                            guard let b = badges.randomElement(using: &rng), try tx.exists(b) else { break }
                            try tx.update(b, ["weight": heights[rng.below(heights.count)] ?? 0.5, "level": rng.int(-5...5)])
                        }
                    }
                    let inside = try tx.checkRecords()
                    #expect(inside.isEmpty, "\(label), inside the transaction: \(inside)")
                    if rng.chance(0.1) { throw Rollback() }
                }
            } catch is Rollback {
            } catch StrataError.conflict {
                // Two members with the same nick and score: the commit refused them.
            }
            let after = try store.read { try $0.checkRecords() }
            #expect(after.isEmpty, "\(label), after the commit: \(after)")
            if !after.isEmpty { return }
        }
        let counts = try store.read { r in try ["Group", "Member", "Badge"].map { try r.count($0) } }
        #expect(counts.allSatisfy { $0 > 3 }, "seed \(seed): the run built too little to check: \(counts)")
    }

    struct Rollback: Error {}

    /// The TodoList fixture through a checkpoint and a reopen: the check reads pages, not only
    /// the log, and finds nothing.
    @Test func soundAfterCheckpointAndReopen() throws {
        let fs = SimulatedFileSystem()
        let store = try makeStore(try todoModel(), fs: fs)
        for t in 0..<40 { try store.write { tx in try RecordsWorkload.step(tx, seed: 0xC4EC, transaction: t) } }
        try store.close()
        let reopened = try makeStore(try todoModel(), fs: fs)
        try expectConsistent(reopened)
        // Without the program's model too, as `strata check` reads a store.
        var o = StoreOptions(durability: .normal)
        o.fileSystem = fs
        o.readOnly = true
        try reopened.close()
        let bare = try RecordStore(path: "/db/records.strata", options: o)
        #expect(try bare.read { try $0.checkRecords() } == [])
        try bare.close()
    }
}
