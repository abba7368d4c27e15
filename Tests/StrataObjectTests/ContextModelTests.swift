import Foundation
import Strata
import StrataTesting
import Testing

/// Model-based test of contexts: random inserts, changes, relationship moves, deletes, saves,
/// rollbacks, refreshes, permanent identifiers and merges over three contexts of one
/// container, against a reference that knows what the store holds and what each context
/// changed (8 seeds × 400 steps here; 200 seeds passed when it was written). After every step each
/// automatically merging context (after `processPendingChanges()`) shows exactly the store's
/// values with its own unsaved changes on top: every item's attributes and list, every list's
/// members (unsaved moves, inserts and deletes included) and derived count and sum (the
/// store's), and the count a fetch with pending changes gives. The third context does not
/// merge automatically and saves with `mergeByPropertyObjectTrump` over stale snapshots (so
/// optimistic-locking conflicts happen); it is compared after its `refreshAllObjects()` steps.
///
/// Lists are made once and never deleted (deleting a list under another context's unsaved
/// insert makes that save fail by design: tested in ObjectLayerTests, not modelled here).
@Suite struct ContextModelTests {
    struct ItemState: Equatable {
        var title: String
        var amount: Decimal
        var list: ManagedObjectID?
    }

    /// The fields of a stored item one context changed (nil: not changed; the store's value
    /// shows through, merges included).
    struct FieldChanges: Equatable {
        var title: String?
        var amount: Decimal?
        var list: ManagedObjectID??

        func applied(to s: ItemState) -> ItemState {
            ItemState(title: title ?? s.title, amount: amount ?? s.amount, list: list ?? s.list)
        }

        /// Without the fields equal to `s`'s (a value set back is no change).
        func without(_ s: ItemState) -> FieldChanges? {
            var c = self
            if c.title == s.title { c.title = nil }
            if c.amount == s.amount { c.amount = nil }
            if c.list == .some(s.list) { c.list = nil }
            return c == FieldChanges() ? nil : c
        }
    }

    /// What one context changed and has not saved.
    struct Pending {
        var changed: [ManagedObjectID: FieldChanges] = [:]
        var deleted: Set<ManagedObjectID> = []
        var inserted: [(Item, ItemState)] = []
    }

    /// Seeds 1…8; `STRATA_MODEL_SEEDS=N` runs 1…N (the closing notes' wider sweeps).
    static let modelSeeds: [UInt64] = ProcessInfo.processInfo.environment["STRATA_MODEL_SEEDS"].flatMap(UInt64.init)
        .map { Array(1...max(1, $0)) } ?? Array(1...8)

    @Test(arguments: modelSeeds) func randomOperationsOverThreeContexts(seed: UInt64) throws {
        try withContainer { container in
            var rng = SplitMix64(seed: mixSeed(0x0B1E_C7, seed))
            let contexts = (0..<3).map { _ in ModelContext(container) }
            contexts[0].automaticallyMergesChangesFromStore = true
            contexts[1].automaticallyMergesChangesFromStore = true
            contexts[2].mergePolicy = .mergeByPropertyObjectTrump

            let setup = ModelContext(container)
            let listObjects = (0..<4).map { TodoList(name: "L\($0)") }
            for l in listObjects { setup.insert(l) }
            try setup.save()
            let lists = listObjects.map(\.objectID)
            var store: [ManagedObjectID: ItemState] = [:]
            var pending = Array(repeating: Pending(), count: 3)
            var log: [String] = []
            let titles = ["tea", "milk", "bread", "jam", "rice"]

            func item(_ id: ManagedObjectID, in c: Int) throws -> Item {
                let found = try contexts[c].object(with: id) as? Item
                return try #require(found)
            }
            func list(_ id: ManagedObjectID?, in c: Int) throws -> TodoList? {
                guard let id else { return nil }
                return try #require(try contexts[c].object(with: id) as? TodoList)
            }
            /// Items context `c` can see: stored ones it did not delete, and its inserts.
            func visible(_ c: Int) -> [ManagedObjectID] {
                store.keys.filter { !pending[c].deleted.contains($0) }.sorted { $0.primaryKey! < $1.primaryKey! }
            }
            func expected(_ id: ManagedObjectID, in c: Int) -> ItemState? {
                store[id].map { pending[c].changed[id]?.applied(to: $0) ?? $0 }
            }

            /// Every difference between context `c` and the reference (empty: none).
            func differences(_ c: Int) throws -> [String] {
                var found: [String] = []
                let ctx = contexts[c]
                for id in visible(c) {
                    let o = try item(id, in: c)
                    let e = expected(id, in: c)!
                    let seen = ItemState(title: o.title, amount: o.amount, list: o.list?.objectID)
                    if seen != e {
                        let committed = (try? o.committedValues(forKeys: ["title", "amount"])).map { "\($0)" } ?? "?"
                        found.append("\(id): \(seen) but expected \(e) (committed \(committed), changed \(o.changedValues().keys.sorted()), updated \(o.isUpdated))")
                    }
                }
                for (o, e) in pending[c].inserted {
                    let seen = ItemState(title: o.title, amount: o.amount, list: o.list?.objectID)
                    if seen != e { found.append("inserted \(o.objectID): \(seen) but expected \(e)") }
                }
                for lid in lists {
                    let l = try #require(try list(lid, in: c))
                    var members = Set(visible(c).filter { expected($0, in: c)?.list == lid })
                    for (o, e) in pending[c].inserted where e.list == lid { members.insert(o.objectID) }
                    let seenMembers = Set(l.items.map(\.objectID))
                    if seenMembers != members { found.append("members of \(lid): \(seenMembers.sorted { "\($0)" < "\($1)" }) but expected \(members.sorted { "\($0)" < "\($1)" })") }
                    let stored = store.values.filter { $0.list == lid }
                    if l.itemCount != Int64(stored.count) { found.append("itemCount of \(lid): \(l.itemCount), expected \(stored.count)") }
                    let total = stored.reduce(Decimal(0)) { $0 + $1.amount }
                    if l.total != total { found.append("total of \(lid): \(l.total), expected \(total)") }
                }
                let count = try ctx.fetchCount(FetchDescriptor<Item>())
                let expectedCount = visible(c).count + pending[c].inserted.count
                if count != expectedCount { found.append("fetchCount \(count), expected \(expectedCount)") }
                return found
            }
            struct Diverged: Error {}
            func compare(_ c: Int, step: Int) throws {
                let found = try differences(c)
                guard !found.isEmpty else { return }
                Issue.record("""
                    seed \(seed), step \(step): context \(c) differs from the reference:
                    \(found.joined(separator: "\n"))
                    operations so far:
                    \(log.enumerated().map { "\($0.offset): \($0.element)" }.joined(separator: "\n"))
                    """)
                throw Diverged()
            }

            for step in 0..<400 {
                let c = rng.below(3)
                let ctx = contexts[c]
                let targets = visible(c)
                let op = rng.below(100)
                switch op {
                case 0..<22:  // insert an item, maybe into a list
                    let state = ItemState(title: titles[rng.below(titles.count)], amount: Decimal(rng.below(10)),
                                          list: rng.chance(0.7) ? lists[rng.below(lists.count)] : nil)
                    let o = Item(title: state.title, amount: state.amount)
                    if let l = state.list { o.list = try list(l, in: c) } else { ctx.insert(o) }
                    #expect(o.context === ctx)
                    pending[c].inserted.append((o, state))
                    log.append("s\(step) c\(c) insert \(state.title)")
                case 22..<50:  // change an attribute or move an item, stored or inserted
                    // The third context, whose snapshots go stale, sets values no snapshot can hold
                    // (so "set back to the snapshot's value" never needs its snapshot in the
                    // reference) and moves no items.
                    let which = rng.below(c == 2 ? 2 : 3)
                    let title = c == 2 ? "c2-\(step)" : titles[rng.below(titles.count)]
                    let amount = c == 2 ? Decimal(100 + step) : Decimal(rng.below(10))
                    let newList = rng.chance(0.8) ? lists[rng.below(lists.count)] : nil
                    if !pending[c].inserted.isEmpty && rng.chance(0.3) {
                        let i = rng.below(pending[c].inserted.count)
                        let o = pending[c].inserted[i].0
                        switch which {
                        case 0: o.title = title; pending[c].inserted[i].1.title = title
                        case 1: o.amount = amount; pending[c].inserted[i].1.amount = amount
                        default: o.list = try list(newList, in: c); pending[c].inserted[i].1.list = newList
                        }
                        log.append("s\(step) c\(c) change inserted #\(i) (\(which))")
                    } else if let id = targets.isEmpty ? nil : targets[rng.below(targets.count)] {
                        let o = try item(id, in: c)
                        var f = pending[c].changed[id] ?? FieldChanges()
                        switch which {
                        case 0: o.title = title; f.title = title
                        case 1: o.amount = amount; f.amount = amount
                        default: o.list = try list(newList, in: c); f.list = .some(newList)
                        }
                        pending[c].changed[id] = f.without(store[id]!)
                        log.append("s\(step) c\(c) change \(id) (\(which))")
                    }
                case 50..<58:  // delete
                    if !pending[c].inserted.isEmpty && rng.chance(0.3) {
                        let (o, _) = pending[c].inserted.remove(at: rng.below(pending[c].inserted.count))
                        try ctx.delete(o)
                        log.append("s\(step) c\(c) delete inserted")
                    } else if let id = targets.isEmpty ? nil : targets[rng.below(targets.count)] {
                        try ctx.delete(try item(id, in: c))
                        pending[c].deleted.insert(id)
                        pending[c].changed[id] = nil
                        log.append("s\(step) c\(c) delete \(id)")
                    }
                case 58..<78:  // save
                    try ctx.save()
                    for (id, f) in pending[c].changed { if let s = store[id] { store[id] = f.applied(to: s) } }
                    // Fields other contexts changed to what this save stored are no longer changes.
                    for other in 0..<3 where other != c {
                        for (id, f) in pending[other].changed { if let s = store[id] { pending[other].changed[id] = f.without(s) } }
                    }
                    for id in pending[c].deleted {
                        store[id] = nil
                        // Other contexts' changes to it are dropped (at their merge or save).
                        for other in 0..<3 where other != c {
                            pending[other].changed[id] = nil
                            pending[other].deleted.remove(id)
                        }
                    }
                    for (o, s) in pending[c].inserted {
                        #expect(!o.objectID.isTemporaryID, "seed \(seed) step \(step)")
                        store[o.objectID] = s
                    }
                    pending[c] = Pending()
                    log.append("s\(step) c\(c) save")
                    // The store holds exactly the reference's items.
                    let fresh = ModelContext(container)
                    var found: [String] = []
                    // As faults, or loaded from the rows the fetch's scan read (decision 52).
                    var everything = FetchDescriptor<Item>()
                    everything.returnsObjectsAsFaults = step % 2 == 0
                    for o in try fresh.fetch(everything) {
                        let seen = ItemState(title: o.title, amount: o.amount, list: o.list?.objectID)
                        if store[o.objectID] != seen { found.append("stored \(o.objectID): \(seen), expected \(String(describing: store[o.objectID]))") }
                    }
                    if try fresh.fetchCount(FetchDescriptor<Item>()) != store.count { found.append("stored count differs") }
                    if !found.isEmpty {
                        Issue.record("seed \(seed), step \(step): \(found.joined(separator: "\n"))\n\(log.joined(separator: "\n"))")
                        throw Diverged()
                    }
                case 78..<84:  // rollback
                    ctx.rollback()
                    pending[c] = Pending()
                    log.append("s\(step) c\(c) rollback")
                case 84..<88:  // permanent identifiers for the unsaved inserts
                    let objects = pending[c].inserted.map(\.0)
                    try ctx.obtainPermanentIDs(for: objects)
                    #expect(objects.allSatisfy { !$0.objectID.isTemporaryID && $0.isInserted }, "seed \(seed) step \(step)")
                    log.append("s\(step) c\(c) obtainPermanentIDs (\(objects.count))")
                case 88..<94:  // refresh one object
                    if let id = targets.isEmpty ? nil : targets[rng.below(targets.count)] {
                        let merge = rng.chance(0.5)
                        ctx.refresh(try item(id, in: c), mergeChanges: merge)
                        if !merge { pending[c].changed[id] = nil }
                        log.append("s\(step) c\(c) refresh \(id) merge: \(merge)")
                    }
                default:  // refresh everything (keeps changes)
                    ctx.refreshAllObjects()
                    log.append("s\(step) c\(c) refreshAllObjects")
                    if c == 2 { try compare(2, step: step) }
                }
                for m in 0..<2 {
                    contexts[m].processPendingChanges()
                    try compare(m, step: step)
                }
            }
            print("ContextModelTests seed \(seed): \(log.count) operations, \(store.count) items stored, "
                  + "\(log.filter { $0.hasSuffix("save") }.count) saves")
        }
    }
}
