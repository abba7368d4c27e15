import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// Model-based: thousands of random transactions over ``todoModel()`` (every derived form),
/// applied to the store and to a plain in-memory reference that computes every derived value
/// from scratch. After each commit every object's derived values must equal the reference's;
/// now and then the store is checked from scratch (`checkRecords`), checkpointed, or closed and
/// reopened (derived values come back from replayed commit frames and from checkpoints).
@Suite struct DerivationModelTests {
    static let seeds: [UInt64] = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init).map { [$0] }
        ?? [0xD1FF_0001, 0xD1FF_0002]

    @Test(arguments: seeds)
    func randomTransactionsKeepEveryDerivedValueRight(seed: UInt64) throws {
        var run = try DerivationModelRun(seed: seed)
        try run.run(transactions: 1_500)
    }
}

/// The reference: the objects as plain values, derived values computed from scratch.
struct ReferenceWorld {
    struct List: Equatable {
        var name: String
        var budget: Decimal
        var tags: Set<UInt64> = []
    }
    struct Item: Equatable {
        var title: String
        var amount: Decimal
        var quantity: Int64
        var weight: Double?
        var list: UInt64?
    }
    struct Tag: Equatable {
        var label: String
        var lists: Set<UInt64> = []
    }
    var lists: [UInt64: List] = [:]
    var items: [UInt64: Item] = [:]
    var tags: [UInt64: Tag] = [:]

    /// Each list's items, computed once per comparison.
    func membersByList() -> [UInt64: [Item]] {
        var out: [UInt64: [Item]] = [:]
        for i in items.values { if let l = i.list { out[l, default: []].append(i) } }
        return out
    }

    /// Every derived attribute of a list, as `checkRecords` would recompute it (now() aside).
    func derived(list pk: UInt64, members: [Item]) -> [String: StoredValue] {
        let l = lists[pk]!
        let amounts = members.map(\.amount)
        let weights = members.compactMap(\.weight)
        let total = amounts.reduce(Decimal(0), +)
        var out: [String: StoredValue] = [
            "itemCount": .int(Int64(members.count)),
            "total": .decimal(total),
            "weightSum": .double(Self.exactSum(weights)),
            "lineSum": .decimal(members.reduce(Decimal(0)) { $0 + $1.amount * Decimal($1.quantity) }),
            "quantitySum": .int(members.reduce(0) { $0 + $1.quantity }),
            "searchName": .string(TextFolding.canonical(l.name)),
            "loudName": .string(l.name.uppercased()),
            "tagCount": .int(Int64(l.tags.count)),
        ]
        out["averageAmount"] = amounts.isEmpty ? .null : .decimal(total / Decimal(amounts.count))
        out["averageWeight"] = weights.isEmpty ? .null : .double(Self.exactSum(weights) / Double(weights.count))
        out["cheapest"] = amounts.min().map(StoredValue.decimal) ?? .null
        out["dearest"] = amounts.max().map(StoredValue.decimal) ?? .null
        return out
    }

    func derived(item pk: UInt64) -> [String: StoredValue] {
        let i = items[pk]!
        let list = i.list.flatMap { lists[$0] }
        return [
            "listName": list.map { .string($0.name) } ?? .null,
            "listSearch": list.map { .string(TextFolding.canonical($0.name)) } ?? .null,
            "lowerTitle": .string(i.title.lowercased()),
            "lineTotal": .decimal(i.amount * Decimal(i.quantity)),
        ]
    }

    func derived(tag pk: UInt64, members: [UInt64: [Item]]) -> [String: StoredValue] {
        let t = tags[pk]!
        return [
            "listCount": .int(Int64(t.lists.count)),
            "listItemTotal": .int(t.lists.reduce(0) { $0 + Int64(members[$1]?.count ?? 0) }),
        ]
    }

    /// A double sum with no rounding drift: summed in Decimal, converted once.
    static func exactSum(_ xs: [Double]) -> Double {
        NSDecimalNumber(decimal: xs.reduce(Decimal(0)) { $0 + Decimal($1) }).doubleValue
    }

    /// Deletes a list as its rules say: its items cascade, its tag links go.
    mutating func deleteList(_ pk: UInt64) {
        lists[pk] = nil
        for (ipk, i) in items where i.list == pk { items[ipk] = nil }
        for tpk in tags.keys { tags[tpk]!.lists.remove(pk) }
    }

    mutating func deleteTag(_ pk: UInt64) {
        tags[pk] = nil
        for lpk in lists.keys { lists[lpk]!.tags.remove(pk) }
    }
}

/// One seeded run: the store, the reference, and the random operations applied to both.
struct DerivationModelRun {
    let seed: UInt64
    var rng: SplitMix64
    let fs = SimulatedFileSystem()
    let model: Model
    var store: RecordStore
    var world = ReferenceWorld()
    /// Each list's `modified` (now()) as last seen, to check it moves exactly when it should.
    var modified: [UInt64: StoredValue] = [:]
    var deleted: [ObjectID] = []
    var commits = 0, rollbacks = 0, conflicts = 0

    static let names = ["Café", "café crème", "CAFÉ", "Straße", "STRASSE", "naïve", "Ærøskøbing", "İstanbul",
                        "Ωmega", "ﬁsh", "Zoë", "groceries", "Groceries", "Ünïcödé", "日本", "a", ""]

    init(seed: UInt64) throws {
        self.seed = seed
        self.rng = SplitMix64(seed: seed)
        self.model = try todoModel()
        self.store = try makeStore(model, fs: fs)
    }

    mutating func pick<T>(_ xs: [T]) -> T { xs[Int(rng.next() % UInt64(xs.count))] }
    mutating func chance(_ p: Double) -> Bool { rng.unit() < p }
    mutating func randomKey<V>(_ d: [UInt64: V]) -> UInt64? { d.isEmpty ? nil : pick(d.keys.sorted()) }

    mutating func amount() -> Decimal { Decimal(Int(rng.next() % 200_001) - 50_000) / 100 }
    mutating func weight() -> Double? {
        switch rng.next() % 6 {
        case 0: return nil
        case 1: return rng.unit() * 1e9              // large next to small: compensation matters
        case 2: return -rng.unit() * 1e-3
        default: return (rng.unit() - 0.3) * 1_000
        }
    }

    mutating func run(transactions: Int) throws {
        for t in 0..<transactions {
            try transaction(t)
            if t % 97 == 96 { try checkFromScratch("after transaction \(t)") }
            if t % 211 == 210 { try store.storage.checkpoint() }
            if t % 331 == 330 { try reopen() }
        }
        try reopen()
        try checkFromScratch("at the end")
        #expect(commits > transactions / 2, "seed \(seed): too few commits (\(commits)) to mean anything")
        #expect(rollbacks > 0 && conflicts > 0, "seed \(seed): rollbacks \(rollbacks), conflicts \(conflicts)")
        print("[derivation model] seed \(seed): \(commits) commits, \(rollbacks) rollbacks, \(conflicts) uniqueness conflicts; "
              + "\(world.lists.count) lists, \(world.items.count) items, \(world.tags.count) tags at the end")
    }

    /// One transaction of 1–8 random operations, applied to the store and to a copy of the
    /// reference that replaces it only if the store committed.
    mutating func transaction(_ t: Int) throws {
        var next = world
        var change = Change()
        let ops = 1 + Int(rng.next() % 8)
        let rollBack = chance(0.05)
        let started = Date()
        let store = self.store
        do {
            try store.write { tx in
                for _ in 0..<ops {
                    try self.randomOperation(tx, &next, &change)
                    // Reads inside the transaction see derived values settled (sometimes after
                    // each operation, so one transaction settles several times).
                    if self.chance(0.3) { try self.compareInside(tx, next, "inside transaction \(t)") }
                }
                if rollBack { throw DeliberateRollback() }
            }
        } catch is DeliberateRollback {
            rollbacks += 1
            try compare("rollback in transaction \(t)", change: Change(), after: .distantPast)
            return
        } catch StrataError.conflict(let entity, _, _) where entity == "Tag" {
            conflicts += 1
            let labels = change.newTagLabels
            #expect(Set(labels).count < labels.count || labels.contains { l in world.tags.values.contains { $0.label == l } },
                    "seed \(seed): transaction \(t) failed a uniqueness check it should have passed")
            try compare("conflict in transaction \(t)", change: Change(), after: .distantPast)
            return
        }
        world = next
        deleted += change.deleted
        commits += 1
        try compare("transaction \(t)", change: change, after: started)
    }

    struct DeliberateRollback: Error {}

    /// Ends a run at the first transaction whose derived values disagree with the reference.
    struct RunStopped: Error, CustomStringConvertible {
        var seed: UInt64, label: String, mismatches: Int
        var description: String { "seed \(seed): stopped at \(label) with \(mismatches) wrong derived value(s)" }
    }

    /// What a transaction did besides changing the reference.
    struct Change {
        /// Lists whose own attributes changed: their now() must move.
        var touchedLists = Set<UInt64>()
        var newTagLabels: [String] = []
        var deleted: [ObjectID] = []
    }

    /// One random operation, on the store and on the reference `w`.
    mutating func randomOperation(_ tx: RecordTransaction, _ w: inout ReferenceWorld, _ change: inout Change) throws {
        func list(_ pk: UInt64) -> ObjectID { ObjectID(entity: "TodoList", primaryKey: pk) }
        func item(_ pk: UInt64) -> ObjectID { ObjectID(entity: "Item", primaryKey: pk) }
        func tag(_ pk: UInt64) -> ObjectID { ObjectID(entity: "Tag", primaryKey: pk) }
        switch rng.next() % 100 {
        case 0..<8:
            let name = pick(Self.names), budget = amount()
            let id = try tx.insert("TodoList", ["name": name, "budget": budget])
            w.lists[id.primaryKey] = .init(name: name, budget: budget)
            change.touchedLists.insert(id.primaryKey)
        case 8..<38:
            let parent = chance(0.9) ? randomKey(w.lists) : nil
            let new = ReferenceWorld.Item(title: pick(Self.names), amount: amount(), quantity: Int64(rng.next() % 20),
                                          weight: weight(), list: parent)
            var values: [String: any ValueConvertible] = ["title": new.title, "amount": new.amount, "quantity": Int(new.quantity)]
            if let wt = new.weight { values["weight"] = wt }
            if let parent { values["list"] = list(parent) }
            let id = try tx.insert("Item", values)
            w.items[id.primaryKey] = new
        case 38..<52:
            guard let pk = randomKey(w.items) else { return }
            switch rng.next() % 4 {
            case 0: let a = amount(); try tx.update(item(pk), ["amount": a]); w.items[pk]!.amount = a
            case 1: let q = Int64(rng.next() % 20); try tx.update(item(pk), ["quantity": Int(q)]); w.items[pk]!.quantity = q
            case 2: let wt = weight(); try tx.update(item(pk), ["weight": wt.map { StoredValue.double($0) } ?? .null]); w.items[pk]!.weight = wt
            default: let s = pick(Self.names); try tx.update(item(pk), ["title": s]); w.items[pk]!.title = s
            }
        case 52..<66:
            guard let pk = randomKey(w.items) else { return }
            let target = chance(0.9) ? randomKey(w.lists) : nil
            if let target, chance(0.5) {
                try tx.add(item(pk), to: "items", of: list(target))
            } else {
                try tx.set("list", of: item(pk), to: target.map(list))
            }
            w.items[pk]!.list = target
        case 66..<72:
            guard let pk = randomKey(w.lists) else { return }
            if chance(0.7) {
                let name = pick(Self.names)
                try tx.update(list(pk), ["name": name])
                if w.lists[pk]!.name != name { change.touchedLists.insert(pk) }
                w.lists[pk]!.name = name
            } else {
                let b = amount()
                try tx.update(list(pk), ["budget": b])
                if w.lists[pk]!.budget != b { change.touchedLists.insert(pk) }
                w.lists[pk]!.budget = b
            }
        case 72..<80:
            guard let pk = randomKey(w.items) else { return }
            try tx.delete(item(pk))
            w.items[pk] = nil
            change.deleted.append(item(pk))
        case 80..<83:
            guard let pk = randomKey(w.lists) else { return }
            let cascaded = w.items.filter { $0.value.list == pk }.keys
            try tx.delete(list(pk))
            w.deleteList(pk)
            change.touchedLists.remove(pk)
            change.deleted += [list(pk)] + cascaded.map(item)
        case 83..<87:
            // Labels come from a small pool, so some inserts break the uniqueness constraint.
            let label = "tag\(rng.next() % 40)"
            let id = try tx.insert("Tag", ["label": label])
            w.tags[id.primaryKey] = .init(label: label)
            change.newTagLabels.append(label)
        case 87..<97:
            guard let t = randomKey(w.tags), let l = randomKey(w.lists) else { return }
            if chance(0.65) {
                if chance(0.5) { try tx.add(list(l), to: "lists", of: tag(t)) } else { try tx.add(tag(t), to: "tags", of: list(l)) }
                w.tags[t]!.lists.insert(l)
                w.lists[l]!.tags.insert(t)
            } else {
                if chance(0.5) { try tx.remove(list(l), from: "lists", of: tag(t)) } else { try tx.remove(tag(t), from: "tags", of: list(l)) }
                w.tags[t]!.lists.remove(l)
                w.lists[l]!.tags.remove(t)
            }
        default:
            guard let pk = randomKey(w.tags) else { return }
            try tx.delete(tag(pk))
            w.deleteTag(pk)
            change.deleted.append(tag(pk))
        }
    }

    /// Every object's derived values against the reference; `now()` moved for exactly the
    /// lists whose own attributes changed, to one timestamp of this commit.
    mutating func compare(_ label: String, change: Change, after started: Date) throws {
        let touched = change.touchedLists
        let w = world
        let members = w.membersByList()
        let expectedCounts = ["TodoList": w.lists.count, "Item": w.items.count, "Tag": w.tags.count]
        let seed = self.seed
        var stamps = Set<StoredValue>()
        var mismatches = 0
        var newModified: [UInt64: StoredValue] = [:]
        try store.read { r in
            for (entity, n) in expectedCounts {
                #expect(try r.count(entity) == n, "seed \(seed), \(label): \(entity) count")
            }
            func expect(_ id: ObjectID, _ want: [String: StoredValue]) throws {
                guard let got = try r.values(of: id) else {
                    Issue.record("seed \(seed), \(label): \(id) is missing")
                    return
                }
                for (name, v) in want where !DerivedComparison.agree(got[name] ?? .null, v) {
                    mismatches += 1
                    if mismatches <= 10 { Issue.record("seed \(seed), \(label): \(id).\(name) = \(got[name] ?? .null), reference says \(v)") }
                }
            }
            for pk in w.lists.keys {
                let id = ObjectID(entity: "TodoList", primaryKey: pk)
                try expect(id, w.derived(list: pk, members: members[pk] ?? []))
                newModified[pk] = try r.value("modified", of: id)
            }
            for pk in w.items.keys { try expect(ObjectID(entity: "Item", primaryKey: pk), w.derived(item: pk)) }
            for pk in w.tags.keys { try expect(ObjectID(entity: "Tag", primaryKey: pk), w.derived(tag: pk, members: members)) }
        }
        for (pk, stamp) in newModified {
            if touched.contains(pk) {
                stamps.insert(stamp)
                if case .date(let d) = stamp { #expect(d >= started, "seed \(seed), \(label): TodoList/\(pk).modified is older than the commit") }
            } else {
                #expect(stamp == modified[pk], "seed \(seed), \(label): TodoList/\(pk).modified moved without a change of its own")
            }
        }
        #expect(stamps.count <= 1, "seed \(seed), \(label): one commit, several now() timestamps: \(stamps)")
        modified = newModified
        // One wrong transaction is enough to debug; the ones after it only repeat it.
        if mismatches > 0 { throw RunStopped(seed: seed, label: label, mismatches: mismatches) }
        // A sample of deleted objects stays deleted.
        for id in deleted.suffix(5) {
            #expect(try store.read { try $0.exists(id) } == false, "seed \(seed), \(label): deleted \(id) exists")
        }
    }

    /// The derived values a transaction reads of its own changes, against the reference as the
    /// transaction has changed it so far: every tag, a sample of lists and items.
    mutating func compareInside(_ tx: RecordTransaction, _ w: ReferenceWorld, _ label: String) throws {
        let members = w.membersByList()
        var mismatches = 0
        func expect(_ id: ObjectID, _ want: [String: StoredValue]) throws {
            guard let got = try tx.values(of: id) else {
                Issue.record("seed \(seed), \(label): \(id) is missing")
                return
            }
            for (name, v) in want where !DerivedComparison.agree(got[name] ?? .null, v) {
                mismatches += 1
                if mismatches <= 10 { Issue.record("seed \(seed), \(label): \(id).\(name) = \(got[name] ?? .null), reference says \(v)") }
            }
        }
        for _ in 0..<min(25, w.lists.count) {
            guard let pk = randomKey(w.lists) else { break }
            try expect(ObjectID(entity: "TodoList", primaryKey: pk), w.derived(list: pk, members: members[pk] ?? []))
        }
        for pk in w.tags.keys { try expect(ObjectID(entity: "Tag", primaryKey: pk), w.derived(tag: pk, members: members)) }
        for _ in 0..<min(20, w.items.count) {
            guard let pk = randomKey(w.items) else { break }
            try expect(ObjectID(entity: "Item", primaryKey: pk), w.derived(item: pk))
        }
        #expect(try tx.count("Item") == w.items.count, "seed \(seed), \(label): Item count")
        if mismatches > 0 { throw RunStopped(seed: seed, label: label, mismatches: mismatches) }
    }

    func checkFromScratch(_ label: String) throws {
        let problems = try store.read { try $0.checkRecords() }
        for p in problems { Issue.record("seed \(seed), \(label): \(p)") }
        let report = try store.storage.check()
        for p in report.problems { Issue.record("seed \(seed), \(label): storage: \(p)") }
    }

    mutating func reopen() throws {
        try store.close()
        store = try makeStore(model, fs: fs)
        try compare("after reopening", change: Change(), after: .distantPast)
    }
}
