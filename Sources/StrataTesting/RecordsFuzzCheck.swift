import Foundation
import StrataRecords
import StrataStorage

/// The record fuzzers' oracle: opens a (damaged) record store, reads every object, fetches
/// through every index and compares each answer with the same fetch over every row, walks every
/// relationship both ways, runs `checkRecords()` (with the program's model and, as `strata
/// check` does, with the model read from the file: they must agree on whether the store is
/// sound), and — opened for writing — commits a transaction and checks again.
///
/// The damage may be invisible (a forged value no derived attribute depends on), so "intact"
/// cannot be required. What is required: no trap, hang or runaway allocation (the caller's
/// process limits catch those); every error a `StrataError`; and when `checkRecords()` finds
/// nothing, every way of reading agrees (an index answers what a scan answers, a relationship
/// reads the same from both ends), and a committed transaction leaves the store sound.
package enum RecordsFuzzCheck {
    /// Opens the store at `path` with `options` — with `model`, or with the model stored in the
    /// file when `nil` — and examines it; a writable store then takes a transaction. The store
    /// is closed before returning.
    package static func examine(path: String, options: StoreOptions, model: Model?) -> RecordsFuzzOutcome {
        do {
            let store = try model.map { try RecordStore(path: path, model: $0, options: options) }
                ?? RecordStore(path: path, options: options)
            defer { try? store.close() }
            let problems = try store.read { try $0.checkRecords(limit: 20) }
            let (objects, disagreements) = try store.read { try readEverything($0) }
            if problems.isEmpty, let first = disagreements.first {
                return .inconsistent("checkRecords() is clean, but \(first)")
            }
            // The tool's view (the model read from the file, as `strata check` opens it) must
            // agree with the program's on whether the store is sound (issue 23).
            if model != nil {
                let toolProblems = try RecordStore(opening: store.storage).read { try $0.checkRecords(limit: 20) }
                if toolProblems.isEmpty != problems.isEmpty {
                    return .inconsistent("the program's check found \(problems.count) problems (\(problems.first ?? "none")), "
                        + "the tool's \(toolProblems.count) (\(toolProblems.first ?? "none"))")
                }
            }
            if !options.readOnly {
                if let failure = try writeAndRecheck(store, wasClean: problems.isEmpty) { return .inconsistent(failure) }
            }
            return .read(objects: objects, problems: problems)
        } catch let e as StrataError {
            return .typed(e)
        } catch {
            return .otherError(String(describing: error))
        }
    }

    /// Reads every object of every entity and compares every way of reaching them. Returns
    /// the number of objects and the disagreements found.
    static func readEverything(_ r: RecordReader) throws -> (Int, [String]) {
        var disagreements: [String] = []
        var total = 0
        for e in r.model.entities {
            let all = try r.objects(e.name)
            total += all.count
            if try r.count(e.name) != all.count { disagreements.append("\(e.name): count() \(try r.count(e.name)) but \(all.count) objects") }
            var values: [ObjectID: [String: StoredValue]] = [:]
            for id in all {
                guard let v = try r.values(of: id) else {
                    disagreements.append("\(id) is listed but has no values")
                    continue
                }
                values[id] = v
            }
            try compareFetches(r, e, all: all, values: values, into: &disagreements)
            try compareRelationships(r, e, all: all, into: &disagreements)
        }
        return (total, disagreements)
    }

    /// `p` hidden from the planner: a fetch with it reads every row.
    static func scanning(_ p: FetchPredicate) -> FetchPredicate { .not(.not(p)) }

    /// Every index (and every unique constraint) of `e`: equality on a few stored values and a
    /// prefix of strings, through the index and by a full scan; the index's order against a
    /// sort of every row.
    static func compareFetches(_ r: RecordReader, _ e: EntityDescription, all: [ObjectID], values: [ObjectID: [String: StoredValue]],
                               into out: inout [String]) throws {
        let leads = Set((e.indexes + e.uniquenessConstraints).compactMap(\.first))
        for a in leads.sorted() {
            var samples: [StoredValue] = []
            for id in all.prefix(64) {
                if let v = values[id]?[a], !samples.contains(v) { samples.append(v) }
                if samples.count == 3 { break }
            }
            var predicates: [FetchPredicate] = samples.map { .comparison(Comparison(.keyPath([a]), .equal, .constant($0))) }
            for case .string(let s) in samples where !s.isEmpty {
                let prefix = StoredValue.string(String(s.prefix(2)))
                predicates.append(.comparison(Comparison(.keyPath([a]), .beginsWith, .constant(prefix))))
                predicates.append(.comparison(Comparison(.keyPath([a]), .beginsWith, .constant(prefix),
                                                         options: [.caseInsensitive, .diacriticInsensitive])))
            }
            for p in predicates {
                let indexed = try r.fetch(FetchRequest(e.name, predicate: p))
                let scanned = try r.fetch(FetchRequest(e.name, predicate: scanning(p)))
                if Set(indexed) != Set(scanned) {
                    out.append("\(e.name) where \(p): the plan '\(try r.fetchPlanDescription(FetchRequest(e.name, predicate: p)))' found \(indexed.count) objects, a scan \(scanned.count)")
                }
                let count = try r.fetchCount(FetchRequest(e.name, predicate: p))
                if count != indexed.count { out.append("\(e.name) where \(p): fetchCount \(count), fetch \(indexed.count)") }
            }
            // The planner takes the order from the index; the harness sorts every row itself.
            let ordered = try r.fetch(FetchRequest(e.name, sortedBy: [FetchSortDescriptor(a)], limit: 20, offset: 1))
            let sorted = all.sorted { x, y in
                let c = StoredValue.compare(values[x]?[a] ?? .null, values[y]?[a] ?? .null) ?? 0
                return c != 0 ? c < 0 : x.primaryKey < y.primaryKey
            }.dropFirst().prefix(20)
            if ordered != Array(sorted) { out.append("\(e.name) sorted by \(a): the fetch's order differs from a sort of every row") }
        }
        // Uniqueness: no two objects share a constrained value.
        for constraint in e.uniquenessConstraints {
            var seen: [[StoredValue]: ObjectID] = [:]
            for id in all {
                guard let v = values[id] else { continue }
                let key = constraint.map { v[$0] ?? .null }
                if key.contains(where: \.isNull) { continue }
                if let other = seen[key] { out.append("\(e.name) \(constraint): \(other) and \(id) share \(key)") }
                seen[key] = id
            }
        }
    }

    /// Every relationship of `e`, read from both ends: a to-one target lists the object among
    /// its inverse's members, and every member of a to-many names (or lists) the object back.
    static func compareRelationships(_ r: RecordReader, _ e: EntityDescription, all: [ObjectID], into out: inout [String]) throws {
        for rel in e.relationships {
            for id in all.prefix(200) {
                if rel.isToMany {
                    for m in try r.members(of: rel.name, of: id) {
                        let back = rel.isManyToMany ? try r.members(of: rel.inverse, of: m).contains(id) : try r.target(of: rel.inverse, of: m) == id
                        if !back { out.append("\(id).\(rel.name) lists \(m), whose \(rel.inverse) does not lead back") }
                    }
                } else if let t = try r.target(of: rel.name, of: id) {
                    if try !r.members(of: rel.inverse, of: t).contains(id) {
                        out.append("\(id).\(rel.name) is \(t), whose \(rel.inverse) does not list it")
                    }
                }
            }
        }
    }

    /// A value of `type` that every validation rule of the fuzzed models accepts.
    static func sample(_ type: AttributeType, _ n: Int) -> StoredValue {
        switch type {
        case .bool: return .bool(n % 2 == 0)
        case .int16, .int32, .int64: return .int(Int64(n % 100))
        case .double: return .double(Double(n % 100) / 4)
        case .decimal: return .decimal(Decimal(n % 100))
        case .string: return .string("fuzz \(n)")
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(n)))
        case .uuid: return .uuid(UUID(uuid: (UInt8(n & 0xFF), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)))
        case .binary: return .binary([UInt8(n & 0xFF)])
        }
    }

    /// One transaction touching every entity: an insert (every required attribute set, to-one
    /// relationships pointed at an existing object), an update of the first object and a
    /// delete of the last one (its delete rules run); then the insert must read back and a
    /// store that was sound must still be. Returns a failure, or `nil`; a `StrataError` from
    /// the transaction is thrown (the damage may make it fail).
    static func writeAndRecheck(_ store: RecordStore, wasClean: Bool) throws -> String? {
        // Fixed values: a replay of the same input does the same transaction.
        let n = 7
        let model = store.model
        let inserted: [ObjectID] = try store.write { tx in
            var made: [ObjectID] = []
            for e in model.entities {
                var values: [String: any ValueConvertible] = [:]
                for a in e.attributes where !a.isTransient && a.defaultValue == nil {
                    values[a.name] = sample(a.type, n + made.count)
                }
                for rel in e.relationships where !rel.isToMany {
                    if let target = try tx.objects(rel.target).first { values[rel.name] = target }
                }
                made.append(try tx.insert(e.name, values))
            }
            for e in model.entities {
                let objects = try tx.objects(e.name)
                if let first = objects.first, let a = e.attributes.first(where: { !$0.isTransient && $0.type == .string }) {
                    try tx.update(first, [a.name: StoredValue.string("fuzz update \(n)")])
                }
                // The last object that was there before, unless it is the first (updated) one.
                if let last = objects.last(where: { !made.contains($0) }), last != objects.first { try tx.delete(last) }
            }
            return made
        }
        if wasClean {
            // The inserts point only at objects that were not deleted, so nothing cascaded to them.
            for id in inserted where try store.read({ try $0.values(of: id) }) == nil {
                return "\(id), inserted by a committed transaction, cannot be read back"
            }
            let after = try store.read { try $0.checkRecords(limit: 20) }
            if let first = after.first { return "a committed transaction left a sound store unsound: \(first)" }
        }
        return nil
    }
}
