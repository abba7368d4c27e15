import Foundation
import StrataRecords
import StrataStorage

/// Seeded writes through any model (``RandomModel`` makes them): inserts with and without the
/// defaults, updates, to-ones set and cleared, to-many and many-to-many members added and
/// removed, deletes through every delete rule, unique values swapped in one transaction, and
/// inputs the store must refuse (rule violations, duplicates, `deny`, values of the wrong type
/// or out of range). A refused transaction rolls back; anything but a ``StrataError`` is
/// rethrown. Then ``disagreements(_:)`` checks the store as the program and as the tool see it.
package enum RandomModelWorkload {
    /// How many transactions committed and how many the store refused.
    package struct Outcome: Sendable {
        /// Transactions that committed.
        package var committed = 0
        /// Transactions that threw a ``StrataError`` (rolled back).
        package var refused = 0
        /// No transactions yet.
        package init() {}
    }

    /// Runs `transactions` write transactions of one to three operations each on `store`.
    /// A store that stops accepting writes (`StrataError.poisoned`) is a finding: rethrown.
    package static func run(_ store: RecordStore, seed: UInt64, transactions: Int) throws -> Outcome {
        var outcome = Outcome()
        for transaction in 0..<transactions {
            var rng = SplitMix64(seed: mixSeed(seed, UInt64(transaction), 0x574F_524B))
            do {
                try store.write { tx in
                    for _ in 0..<rng.int(1...3) { try step(tx, &rng) }
                }
                outcome.committed += 1
            } catch let error as StrataError {
                if case .poisoned = error { throw error }
                outcome.refused += 1
            }
        }
        return outcome
    }

    /// One random operation in `tx`; `note` hears it described before it runs (a reproducer's
    /// script).
    package static func step(_ tx: RecordTransaction, _ rng: inout SplitMix64,
                             note: (String) -> Void = { _ in }) throws {
        let model = tx.model
        let entity = model.entities[rng.below(model.entities.count)]
        let objects = try tx.objects(entity.name)
        func some(_ entity: String) throws -> ObjectID? {
            let all = try tx.objects(entity)
            return all.isEmpty ? nil : all[rng.below(all.count)]
        }
        let choice = objects.isEmpty ? 0 : rng.below(10)
        switch choice {
        case 0, 1, 2:
            var values: [String: any ValueConvertible] = [:]
            for attribute in entity.attributes where !attribute.isTransient && !rng.chance(0.25) {
                values[attribute.name] = value(for: attribute, &rng)
            }
            for relationship in entity.relationships where !relationship.isToMany && rng.chance(0.8) {
                if let target = try some(relationship.target) { values[relationship.name] = target }
            }
            let described = values.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.strataValue)" }
            note("insert \(entity.name) \(described)")
            _ = try tx.insert(entity.name, values)
        case 3, 4:
            let id = objects[rng.below(objects.count)]
            let stored = entity.attributes.filter { !$0.isTransient }
            guard !stored.isEmpty else { return }
            var values: [String: any ValueConvertible] = [:]
            for _ in 0..<rng.int(1...2) {
                let attribute = stored[rng.below(stored.count)]
                values[attribute.name] = value(for: attribute, &rng)
            }
            note("update \(id) \(values.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.strataValue)" })")
            try tx.update(id, values)
        case 5:
            let toOnes = entity.relationships.filter { !$0.isToMany }
            guard !toOnes.isEmpty else { return }
            let relationship = toOnes[rng.below(toOnes.count)]
            let id = objects[rng.below(objects.count)], target = rng.chance(0.2) ? nil : try some(relationship.target)
            note("set \(relationship.name) of \(id) to \(target.map { "\($0)" } ?? "nil")")
            try tx.set(relationship.name, of: id, to: target)
        case 6:
            let toManys = entity.relationships.filter(\.isToMany)
            guard !toManys.isEmpty else { return }
            let relationship = toManys[rng.below(toManys.count)]
            guard let member = try some(relationship.target) else { return }
            let id = objects[rng.below(objects.count)]
            if rng.chance(0.3) {
                note("remove \(member) from \(relationship.name) of \(id)")
                try tx.remove(member, from: relationship.name, of: id)
            } else {
                note("add \(member) to \(relationship.name) of \(id)")
                try tx.add(member, to: relationship.name, of: id)
            }
        case 7 where objects.count >= 2
                && entity.uniquenessConstraints.contains { $0.count == 1 && entity.attribute($0[0]) != nil }:
            // Two objects trade the values of a single-attribute unique constraint: legal, since
            // uniqueness is judged at commit.
            let attributeName = entity.uniquenessConstraints.first {
                $0.count == 1 && entity.attribute($0[0]) != nil
            }![0]
            let first = objects[rng.below(objects.count)], second = objects[rng.below(objects.count)]
            let firstValue = try tx.value(attributeName, of: first)
            let secondValue = try tx.value(attributeName, of: second)
            note("swap \(attributeName) of \(first) and \(second)")
            try tx.update(first, [attributeName: secondValue])
            try tx.update(second, [attributeName: firstValue])
        default:
            let id = objects[rng.below(objects.count)]
            note("delete \(id)")
            try tx.delete(id)
        }
    }

    /// A value for attribute `attribute`: mostly of its type, now and then `null` (refused when the
    /// attribute is required) or of another type (refused).
    static func value(for attribute: AttributeDescription, _ rng: inout SplitMix64) -> StoredValue {
        if rng.chance(0.08) { return .null }
        if rng.chance(0.04) {
            return RandomValues.value(AttributeType.allCases[rng.below(AttributeType.allCases.count)], &rng)
        }
        return RandomValues.value(attribute.type, &rng)
    }

    /// What the program and the tool disagree about, or find wrong, in `store` (opened with the
    /// program's model): `checkRecords()` with the program's model, the same with the model the
    /// tool rebuilds from the stored text (``RecordStore/init(opening:)``), the rebuilt model's
    /// text against the stored text, and every object's values and relationships read through
    /// both. Empty when they agree and both find the store sound.
    package static func disagreements(_ store: RecordStore) throws -> [String] {
        var out: [String] = []
        let tool = try RecordStore(opening: store.storage)
        let programProblems = try store.read { try $0.checkRecords() }
        let toolProblems = try tool.read { try $0.checkRecords() }
        out += programProblems.map { "with the program's model: \($0)" }
        out += toolProblems.map { "as the tool opens it: \($0)" }
        if tool.model.schemaLines != store.model.schemaLines {
            let lost = store.model.schemaLines.filter { !tool.model.schemaLines.contains($0) }
            out.append("the rebuilt model prints other lines; stored lines it lost: \(lost)")
        }
        let mine = try store.read { try digest($0) }, theirs = try tool.read { try digest($0) }
        if mine != theirs {
            let first = zip(mine, theirs).first { $0 != $1 }
            let difference = first.map { "\($0.0) | \($0.1)" } ?? "\(mine.count) vs \(theirs.count) lines"
            out.append("the objects read differently: \(difference)")
        }
        return out
    }

    /// Every object's values and relationships, one line each, in model order.
    package static func digest(_ reader: RecordReader) throws -> [String] {
        var out: [String] = []
        for entity in reader.model.entities {
            for id in try reader.objects(entity.name) {
                let values = try reader.values(of: id) ?? [:]
                var parts = values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                for rel in entity.relationships {
                    if rel.isToMany {
                        let members = try reader.members(of: rel.name, of: id).map(\.primaryKey).sorted()
                        parts.append("\(rel.name)->\(members)")
                    } else {
                        parts.append("\(rel.name)->\(try reader.target(of: rel.name, of: id)?.primaryKey ?? 0)")
                    }
                }
                out.append("\(entity.name)/\(id.primaryKey) " + parts.joined(separator: " "))
            }
        }
        return out
    }
}
