import Foundation
import StrataRecords
import StrataStorage

/// Crash rounds for the record layer: a seeded workload of record transactions (inserts,
/// moves between lists, deletes that cascade, many-to-many links, changes that fan out to
/// derived copies) on a simulated file system, stopped at a random write or sync and crashed.
/// After recovery: the rows are exactly the state after some committed transaction, every
/// acknowledged one included; every derived value and index agrees with the rows
/// (`checkRecords()`); the page file checks clean; and a new transaction commits.
struct RecordsCrashTest {
    let seed: UInt64
    let rounds: Int
    let verbose: Bool
    static let path = "/db/records.strata"
    static let transactions = 40

    static func model() throws -> Model {
        try Model {
            Entity("TodoList") {
                Attribute("name", .string)
                Relationship("items", toMany: "Item", inverse: "list", deleteRule: .cascade)
                Relationship("tags", toMany: "Tag", inverse: "lists")
                Derived("itemCount", .int64, "items.@count")
                Derived("total", .decimal, "items.amount.@sum")
                Derived("weight", .double, "items.weight.@sum")
                Derived("dearest", .decimal, "items.amount.@max", optional: true)
                Derived("searchName", .string, "canonical:(name)")
                FetchIndex("searchName")
            }
            Entity("Item") {
                Attribute("title", .string)
                Attribute("amount", .decimal, default: Decimal(0))
                Attribute("weight", .double, default: 0.0)
                Relationship("list", toOne: "TodoList", inverse: "items")
                Derived("listName", .string, "list.name", optional: true)
                Derived("lowerTitle", .string, "lowercase:(title)")
                FetchIndex("title")
            }
            Entity("Tag") {
                Attribute("label", .string)
                Relationship("lists", toMany: "TodoList", inverse: "tags")
                Derived("listCount", .int64, "lists.@count")
                Derived("itemTotal", .int64, "lists.itemCount.@sum")
                Unique("label")
            }
        }
    }

    static func options(_ fs: SimulatedFileSystem) -> StoreOptions {
        var o = StoreOptions(durability: .full)
        o.fileSystem = fs
        o.syncIntervalMilliseconds = 3_600_000
        o.compactOnCloseGarbageRatio = 1
        o.checkpointLogBytes = 16 << 10
        o.checkpointDirtyBytes = 128 << 10
        o.cacheBytes = 8 << 20
        return o
    }

    /// Transaction `t` of the workload for `seed`: a pure function of both, so a rerun makes
    /// the same primary keys and the same states.
    static func step(_ tx: RecordTransaction, seed: UInt64, t: Int) throws {
        var rng = SplitMix64(seed: mixSeed(seed, UInt64(t), 0x5245_4353))
        let names = ["Home", "Café", "STRASSE", "Ørsted", "work", "Groceries"]
        let lists = try tx.objects("TodoList"), items = try tx.objects("Item"), tags = try tx.objects("Tag")
        for op in 0..<rng.int(1...6) {
            switch rng.below(10) {
            case 0 where lists.count < 8, 1 where lists.isEmpty:
                try tx.insert("TodoList", ["name": names[rng.below(names.count)] + " \(t)"])
            case 2 where !lists.isEmpty:
                let l = lists[rng.below(lists.count)]
                if try tx.exists(l) { try tx.update(l, ["name": names[rng.below(names.count)]]) }
            case 3 where lists.count > 2 && rng.below(3) == 0:
                let l = lists[rng.below(lists.count)]
                if try tx.exists(l) { try tx.delete(l) }
            case 4 where !tags.isEmpty && !lists.isEmpty:
                let tag = tags[rng.below(tags.count)], l = lists[rng.below(lists.count)]
                if try tx.exists(tag), try tx.exists(l) {
                    if rng.below(3) == 0 { try tx.remove(l, from: "lists", of: tag) } else { try tx.add(l, to: "lists", of: tag) }
                }
            case 5 where tags.count < 4:
                try tx.insert("Tag", ["label": "tag \(t).\(op)"])
            case 6 where !items.isEmpty:
                let i = items[rng.below(items.count)]
                if try tx.exists(i) { try tx.update(i, ["amount": Decimal(rng.below(10_000)) / 100, "weight": rng.unit() * 10]) }
            case 7 where !items.isEmpty && !lists.isEmpty:
                let i = items[rng.below(items.count)], l = lists[rng.below(lists.count)]
                if try tx.exists(i), try tx.exists(l) { try tx.set("list", of: i, to: rng.below(5) == 0 ? nil : l) }
            case 8 where !items.isEmpty:
                let i = items[rng.below(items.count)]
                if try tx.exists(i) { try tx.delete(i) }
            default:
                guard !lists.isEmpty else { continue }
                let l = lists[rng.below(lists.count)]
                if try tx.exists(l) {
                    try tx.insert("Item", ["title": "Item \(rng.below(100))", "amount": Decimal(rng.below(10_000)) / 100,
                                           "weight": rng.unit() * 10, "list": l])
                }
            }
        }
    }

    /// Every object's stored values (derived ones included), in a comparable form.
    static func digest(_ r: RecordReader) throws -> [String] {
        var out: [String] = []
        for e in r.model.entities {
            for id in try r.objects(e.name) {
                let values = try r.values(of: id) ?? [:]
                var parts = values.sorted { $0.key < $1.key }.filter { $0.key != "modified" }.map { "\($0.key)=\($0.value)" }
                for rel in e.relationships where !rel.isToMany { parts.append("\(rel.name)->\(try r.target(of: rel.name, of: id)?.primaryKey ?? 0)") }
                out.append("\(id) " + parts.joined(separator: " "))
            }
        }
        return out
    }

    func run(into counts: inout CrashCounts) throws {
        let model = try RecordsCrashTest.model()
        var reached: [Int: Int] = [:]
        defer {
            if rounds > 0 {
                printError("crash-test: record-layer recoveries reached \(reached.count) distinct committed states (\(reached[0] ?? 0) rounds the empty start, \(reached[RecordsCrashTest.transactions] ?? 0) the final state)")
            }
        }
        for r in 0..<rounds {
            let workloadSeed = mixSeed(seed, UInt64(r / 8), 0x5243)
            let crashSeed = mixSeed(seed, UInt64(r), 0x5243_5253)
            let (verdict, label) = try round(model, workloadSeed: workloadSeed, crashSeed: crashSeed)
            if verbose { printError("records round \(r) \(label): \(verdict)") }
            if case .ok(let i) = verdict { reached[i, default: 0] += 1 }
            counts.record(verdict, "records round \(r) (seed \(seed), \(label))")
        }
    }

    /// One round: the uncrashed run's states and call count, then a run stopped at a random
    /// call, crashed and verified.
    func round(_ model: Model, workloadSeed: UInt64, crashSeed: UInt64) throws -> (CrashVerdict, String) {
        // The reference run.
        let reference = SimulatedFileSystem()
        var states: [[String]] = []
        do {
            let store = try RecordStore(path: RecordsCrashTest.path, model: model, options: RecordsCrashTest.options(reference))
            states.append(try store.read { try RecordsCrashTest.digest($0) })
            for t in 0..<RecordsCrashTest.transactions {
                try store.write { try RecordsCrashTest.step($0, seed: workloadSeed, t: t) }
                states.append(try store.read { try RecordsCrashTest.digest($0) })
            }
            try store.close()
        } catch {
            return (.corrupt("the uncrashed workload failed: \(describe(error))"), "reference")
        }
        var rng = SplitMix64(seed: crashSeed)
        let stopAt = rng.below(max(1, reference.mutationCount))
        let fs = SimulatedFileSystem()
        fs.crashAfter(operations: stopAt)
        var low = 0, high = 0
        do {
            let store = try RecordStore(path: RecordsCrashTest.path, model: model, options: RecordsCrashTest.options(fs))
            for t in 0..<RecordsCrashTest.transactions {
                high = t + 1
                try store.write { try RecordsCrashTest.step($0, seed: workloadSeed, t: t) }
                low = t + 1  // full durability: acknowledged means durable
            }
            try store.close()
        } catch {
            if !fs.hasCrashed { return (.corrupt("the workload failed before its crash point: \(describe(error))"), "crashAfter(\(stopAt))") }
        }
        let summary = fs.crash(seed: crashSeed)
        let label = "crashAfter(\(stopAt)) of \(reference.mutationCount) calls, crash \(summary)"
        do {
            let store: RecordStore
            do {
                store = try RecordStore(path: RecordsCrashTest.path, model: model, options: RecordsCrashTest.options(fs))
            } catch let e as StrataError {
                // Before the first commit was durable there may be no store (or no model) yet.
                if low == 0, case .fileNotFound = e { return (.ok(state: 0), label) }
                if low == 0, case .notAStrataFile = e { return (.ok(state: 0), label) }
                throw e
            }
            let content = try store.read { try RecordsCrashTest.digest($0) }
            guard let i = (low...high).first(where: { states[$0] == content }) else {
                try? store.close()
                if let j = states.firstIndex(of: content), j < low { return (.lost("recovered state \(j), but \(low) commits were acknowledged"), label) }
                return (.corrupt("recovered rows are no committed state (allowed \(low)...\(high))"), label)
            }
            let problems = try store.read { try $0.checkRecords() }
            if !problems.isEmpty {
                try? store.close()
                return (.corrupt("derived values or indexes disagree with the rows after recovery to state \(i): \(problems.prefix(3).joined(separator: "; "))"), label)
            }
            let report = try store.storage.check()
            if !report.isClean { return (.corrupt("check after recovery: \(report.problems.prefix(3).joined(separator: "; "))"), label) }
            try store.write { try RecordsCrashTest.step($0, seed: workloadSeed, t: 1000) }
            let after = try store.read { try $0.checkRecords() }
            try store.close()
            if !after.isEmpty { return (.corrupt("a commit after recovery left: \(after.prefix(3).joined(separator: "; "))"), label) }
            return (.ok(state: i), label)
        } catch {
            return (CrashVerdict.from(error, "recovery"), label)
        }
    }
}
