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
            // The history as a replicator reads it: the checker and the reader agree on whether
            // it is sound (a reader that skipped a damaged entry would lose a change silently).
            do {
                let kept = try store.read { try $0.earliestHistoryToken() }
                _ = try store.history(after: kept)
            } catch let error as StrataError {
                if problems.isEmpty {
                    return .inconsistent("checkRecords() is clean, but reading the history threw \(error)")
                }
            }
            // The tool's view (the model read from the file, as `strata check` opens it) must
            // agree with the program's on whether the store is sound (decision 41).
            if model != nil {
                let toolProblems = try RecordStore(opening: store.storage).read { try $0.checkRecords(limit: 20) }
                if toolProblems.isEmpty != problems.isEmpty {
                    return .inconsistent("the program's check found \(problems.count) problems "
                        + "(\(problems.first ?? "none")), "
                        + "the tool's \(toolProblems.count) (\(toolProblems.first ?? "none"))")
                }
            }
            if !options.readOnly {
                if let failure = try writeAndRecheck(store, wasClean: problems.isEmpty) {
                    return .inconsistent(failure)
                }
            }
            return .read(objects: objects, problems: problems)
        } catch let error as StrataError {
            return .typed(error)
        } catch {
            return .otherError(String(describing: error))
        }
    }

    /// Reads every object of every entity and compares every way of reaching them. Returns
    /// the number of objects and the disagreements found.
    static func readEverything(_ reader: RecordReader) throws -> (Int, [String]) {
        var disagreements: [String] = []
        var total = 0
        for entity in reader.model.entities {
            let all = try reader.objects(entity.name)
            total += all.count
            if try reader.count(entity.name) != all.count {
                disagreements.append("\(entity.name): count() \(try reader.count(entity.name)) "
                                     + "but \(all.count) objects")
            }
            var values: [ObjectID: [String: StoredValue]] = [:]
            for id in all {
                guard let found = try reader.values(of: id) else {
                    disagreements.append("\(id) is listed but has no values")
                    continue
                }
                values[id] = found
            }
            try compareFetches(reader, entity, all: all, values: values, into: &disagreements)
            try compareRelationships(reader, entity, all: all, into: &disagreements)
        }
        return (total, disagreements)
    }

    /// `predicate` hidden from the planner: a fetch with it reads every row.
    static func scanning(_ predicate: FetchPredicate) -> FetchPredicate { .not(.not(predicate)) }

    /// Every index (and every unique constraint) of `entity`: equality on a few stored values and a
    /// prefix of strings, through the index and by a full scan; the index's order against a
    /// sort of every row.
    static func compareFetches(_ reader: RecordReader, _ entity: EntityDescription, all: [ObjectID],
                               values: [ObjectID: [String: StoredValue]], into out: inout [String]) throws {
        let leads = Set((entity.indexes + entity.uniquenessConstraints).compactMap(\.first))
        for lead in leads.sorted() {
            var samples: [StoredValue] = []
            for id in all.prefix(64) {
                if let value = values[id]?[lead], !samples.contains(value) { samples.append(value) }
                if samples.count == 3 { break }
            }
            var predicates: [FetchPredicate] = samples.map {
                .comparison(Comparison(.keyPath([lead]), .equal, .constant($0)))
            }
            for case .string(let string) in samples where !string.isEmpty {
                let prefix = StoredValue.string(String(string.prefix(2)))
                predicates.append(.comparison(Comparison(.keyPath([lead]), .beginsWith, .constant(prefix))))
                predicates.append(.comparison(Comparison(.keyPath([lead]), .beginsWith, .constant(prefix),
                                                         options: [.caseInsensitive, .diacriticInsensitive])))
            }
            for predicate in predicates {
                let indexed = try reader.fetch(FetchRequest(entity.name, predicate: predicate))
                let scanned = try reader.fetch(FetchRequest(entity.name, predicate: scanning(predicate)))
                if Set(indexed) != Set(scanned) {
                    let plan = try reader.fetchPlanDescription(FetchRequest(entity.name, predicate: predicate))
                    out.append("\(entity.name) where \(predicate): the plan '\(plan)' found \(indexed.count) objects, "
                               + "a scan \(scanned.count)")
                }
                let count = try reader.fetchCount(FetchRequest(entity.name, predicate: predicate))
                if count != indexed.count {
                    out.append("\(entity.name) where \(predicate): fetchCount \(count), fetch \(indexed.count)")
                }
            }
            // The planner takes the order from the index; the harness sorts every row itself.
            let ordered = try reader.fetch(FetchRequest(entity.name, sortedBy: [FetchSortDescriptor(lead)], limit: 20,
                                                        offset: 1))
            let sorted = all.sorted { first, second in
                let order = StoredValue.compare(values[first]?[lead] ?? .null, values[second]?[lead] ?? .null) ?? 0
                return order != 0 ? order < 0 : first.primaryKey < second.primaryKey
            }.dropFirst().prefix(20)
            if ordered != Array(sorted) {
                out.append("\(entity.name) sorted by \(lead): the fetch's order differs from a sort of every row")
            }
        }
        // Word indexes: a few words of stored values, exact and as a prefix, through the index
        // and by a scan of the rows.
        for properties in entity.fullTextIndexes {
            var queries: [String] = []
            for id in all.prefix(64) {
                for property in properties {
                    guard case .string(let text)? = values[id]?[property],
                          let word = text.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).first else { continue }
                    if !queries.contains(String(word)) { queries += [String(word), String(word.prefix(2)) + "*"] }
                }
                if queries.count >= 6 { break }
            }
            for query in queries {
                let predicate = FetchPredicate.words(of: properties.map { PropertyPath($0) }, matching: query)
                let indexed = try reader.fetch(FetchRequest(entity.name, predicate: predicate))
                let scanned = try reader.fetch(FetchRequest(entity.name, predicate: scanning(predicate)))
                if Set(indexed) != Set(scanned) {
                    out.append("\(entity.name) where \(predicate): the word index found \(indexed.count) objects, "
                               + "a scan \(scanned.count)")
                }
                let hits = try reader.search(TextSearch(entity.name, matching: query, in: properties))
                if Set(hits.map(\.id)) != Set(indexed) {
                    out.append("\(entity.name) search '\(query)': \(hits.count) hits, the word index's fetch \(indexed.count)")
                }
            }
        }
        // Uniqueness: no two objects share a constrained value.
        for constraint in entity.uniquenessConstraints {
            var seen: [[StoredValue]: ObjectID] = [:]
            for id in all {
                guard let row = values[id] else { continue }
                let key = constraint.map { row[$0] ?? .null }
                if key.contains(where: \.isNull) { continue }
                if let other = seen[key] { out.append("\(entity.name) \(constraint): \(other) and \(id) share \(key)") }
                seen[key] = id
            }
        }
    }

    /// Every relationship of `entity`, read from both ends: a to-one target lists the object among
    /// its inverse's members, and every member of a to-many names (or lists) the object back.
    static func compareRelationships(_ reader: RecordReader, _ entity: EntityDescription, all: [ObjectID],
                                     into out: inout [String]) throws {
        for rel in entity.relationships {
            for id in all.prefix(200) {
                if rel.isToMany {
                    for member in try reader.members(of: rel.name, of: id) {
                        let back = rel.isManyToMany
                            ? try reader.members(of: rel.inverse, of: member).contains(id)
                            : try reader.target(of: rel.inverse, of: member) == id
                        if !back {
                            out.append("\(id).\(rel.name) lists \(member), whose \(rel.inverse) does not lead back")
                        }
                    }
                } else if let target = try reader.target(of: rel.name, of: id) {
                    if try !reader.members(of: rel.inverse, of: target).contains(id) {
                        out.append("\(id).\(rel.name) is \(target), whose \(rel.inverse) does not list it")
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
            for entity in model.entities {
                var values: [String: any ValueConvertible] = [:]
                for attribute in entity.attributes where !attribute.isTransient && attribute.defaultValue == nil {
                    values[attribute.name] = sample(attribute.type, n + made.count)
                }
                for rel in entity.relationships where !rel.isToMany {
                    if let target = try tx.objects(rel.target).first { values[rel.name] = target }
                }
                made.append(try tx.insert(entity.name, values))
            }
            for entity in model.entities {
                let objects = try tx.objects(entity.name)
                if let first = objects.first,
                   let attribute = entity.attributes.first(where: { !$0.isTransient && $0.type == .string }) {
                    try tx.update(first, [attribute.name: StoredValue.string("fuzz update \(n)")])
                }
                // The last object that was there before, unless it is the first (updated) one.
                if let last = objects.last(where: { !made.contains($0) }), last != objects.first {
                    try tx.delete(last)
                }
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
