import Foundation
import StrataStorage

/// One migration stage from the stored model's layout to another, inside the caller's write
/// transaction: rows move field by field (by name, or by renaming identifier); every derived
/// value, index, uniqueness entry and inverse is then rebuilt from the rows, exactly as if they
/// were inserted. A custom stage (`migrate` set) carries over what can be carried, leaves the
/// rest at its default, and lets its code read the old rows and change the new ones before the
/// rebuild.
struct Migration {
    let old: Model
    let new: Model
    /// A custom stage's code: the old rows and the transaction holding the new ones.
    var migrate: ((MigrationSnapshot, RecordTransaction) throws -> Void)?
    /// Where the stage stands, told as it goes.
    var progress = MigrationProgressReporter.silent

    /// The stored entity a new entity continues.
    func source(of entity: EntityDescription) -> EntityDescription? {
        old.entity(entity.renamingIdentifier ?? entity.name) ?? old.entity(entity.name)
    }

    /// The stored field a new field continues, if any.
    func source(of field: Field, in stored: EntityDescription) -> Int? {
        for name in [field.renamedFrom, field.name].compactMap({ $0 }) {
            if let i = stored.fieldIndex[name], stored.fields[i].kind != .auxiliary { return i }
        }
        return nil
    }

    /// Why the stored field `i` cannot carry its values into `field`; nil when it can.
    func obstacle(to field: Field, from i: Int, in stored: EntityDescription, of entity: EntityDescription) -> String? {
        switch (field.kind, stored.fields[i].kind) {
        case (.attribute, .attribute):
            let from = stored.fields[i].type, to = field.type
            let widening = from.isInteger && to.isInteger
                && (to.integerRange!.lowerBound <= from.integerRange!.lowerBound)
            guard from != to && !widening else { return nil }
            return "\(entity.name).\(field.name): type changed from \(from.rawValue) to \(to.rawValue); "
                + "a lightweight migration cannot convert values"
        case (.toOne(let target), .toOne(let storedTarget)):
            guard source(of: new.entities[target])?.index != storedTarget else { return nil }
            return "\(entity.name).\(field.name): the relationship now points at another entity"
        default:
            return nil  // from a derived value or another kind: nothing is carried, nothing refused
        }
    }

    /// The stored field whose values `field` takes over, if any: one that continues it and can
    /// carry them.
    func carried(_ field: Field, in stored: EntityDescription, of entity: EntityDescription) -> Int? {
        guard let i = source(of: field, in: stored) else { return nil }
        switch (field.kind, stored.fields[i].kind) {
        case (.attribute, .attribute), (.toOne, .toOne):
            return obstacle(to: field, from: i, in: stored, of: entity) == nil ? i : nil
        default:
            return nil
        }
    }

    /// Checks that every kept field can carry its values over (a lightweight stage).
    func checkCompatible() throws {
        var problems: [String] = []
        for entity in new.entities {
            guard let stored = source(of: entity) else { continue }
            for field in entity.fields {
                guard let i = source(of: field, in: stored),
                      let problem = obstacle(to: field, from: i, in: stored, of: entity) else { continue }
                problems.append(problem)
            }
        }
        if !problems.isEmpty { throw StrataError.modelMismatch(differences: problems) }
    }

    /// Runs the stage in `tx`; the model is stored at the end (the caller commits).
    func run(in tx: WriteTransaction) throws {
        if migrate == nil { try checkCompatible() }
        let reader = RecordReader(model: old, source: .write(tx))
        defer { reader.isOpen = false }
        let meta = try tx.treeCreatingIfMissing(RecordTrees.meta)
        // Everything the old layout holds that the stage needs, read before its trees go: the
        // rows of continued entities (all of them for custom code) and many-to-many links.
        let wanted = old.entities.filter { stored in
            migrate != nil || new.entities.contains { source(of: $0)?.index == stored.index }
        }
        let total = try wanted.reduce(0) { $0 + (try reader.count($1.name)) }
        var snapshot = MigrationSnapshot(model: old)
        progress.tell(.reading, done: 0, of: total)
        var done = 0
        for stored in wanted {
            var list: [(UInt64, [StoredValue])] = []
            for id in try reader.objects(stored.name) {
                if let row = try reader.row(RowKey(entity: stored.index, pk: id.primaryKey)) {
                    list.append((id.primaryKey, row))
                }
                done += 1
                progress.tellEvery(.reading, done: done, of: total)
            }
            snapshot.rows[stored.index] = list
            for rel in stored.relationships where rel.isManyToMany {
                var members: [UInt64: [UInt64]] = [:]
                for (pk, _) in list {
                    let keys = try reader.memberKeys(rel, of: RowKey(entity: stored.index, pk: pk))
                    if !keys.isEmpty { members[pk] = keys }
                }
                snapshot.links[MigrationSnapshot.LinkKey(entity: stored.index, relationship: rel.name)] = members
            }
        }
        var counters: [Int: UInt64] = [:]
        for entity in new.entities {
            guard let stored = source(of: entity), let next = try meta.get(RecordTrees.nextKey(stored)) else { continue }
            counters[entity.index] = try RecordTrees.storedPrimaryKey(next, tree: RecordTrees.meta)
        }
        for stored in old.entities { _ = try meta.delete(RecordTrees.nextKey(stored)) }
        for name in try tx.treeNames where RecordTrees.dataTreePrefixes.contains(where: { name.hasPrefix($0) }) {
            try tx.dropTree(name)
        }
        // The rows again, in the new layout, as inserts: the commit derives everything.
        let transaction = RecordTransaction(model: new, tx: tx)
        defer { transaction.isOpen = false }
        // A migration rewrites rows, it does not edit them: nothing for the history to hold.
        transaction.recordsHistory = false
        var keptNow: [(RowKey, Int, StoredValue)] = []
        progress.tell(.writing, done: 0, of: total)
        done = 0
        for entity in new.entities {
            guard let stored = source(of: entity), let list = snapshot.rows[stored.index] else { continue }
            let sources = entity.fields.map { carried($0, in: stored, of: entity) }
            for (pk, row) in list {
                var values = entity.fields.map { $0.defaultValue ?? .null }
                for (i, field) in entity.fields.enumerated() {
                    switch field.kind {
                    case .attribute, .toOne:
                        if let j = sources[i] { values[i] = row[j] }
                    case .derived, .auxiliary:
                        break
                    }
                }
                for derived in entity.derivedAttributes {
                    if case .aggregate(let function, _, _) = derived.parsed,
                       function == .count || function == .sum {
                        values[derived.field] = derived.type == .decimal
                            ? .decimal(0) : (derived.type == .double ? .double(0) : .int(0))
                    }
                    if derived.parsed == .now, let j = source(of: entity.fields[derived.field], in: stored),
                       !row[j].isNull {
                        keptNow.append((RowKey(entity: entity.index, pk: pk), derived.field, row[j]))
                    }
                }
                try transaction.write(RowKey(entity: entity.index, pk: pk), values)
                done += 1
                progress.tellEvery(.writing, done: done, of: total)
            }
            if let next = counters[entity.index] { transaction.nextPrimaryKeys[entity.index] = next }
        }
        for entity in new.entities {
            guard let stored = source(of: entity) else { continue }
            // One side is enough: linking writes both join trees.
            for rel in entity.relationships where rel.isManyToMany && entity.index <= rel.targetIndex {
                guard let orel = stored.relationship(rel.renamedFrom ?? rel.name) ?? stored.relationship(rel.name),
                      orel.isManyToMany, source(of: new.entities[rel.targetIndex])?.index == orel.targetIndex,
                      let members = snapshot.links[.init(entity: stored.index, relationship: orel.name)]
                else { continue }
                for (pk, others) in members.sorted(by: { $0.key < $1.key }) {
                    for other in others {
                        try transaction.link(rel, RowKey(entity: entity.index, pk: pk),
                                             RowKey(entity: rel.targetIndex, pk: other), add: true)
                    }
                }
            }
        }
        if let migrate {
            progress.tell(.migrating, done: 0, of: total)
            try migrate(snapshot, transaction)
        }
        progress.tell(.deriving, done: 0, of: total)
        try transaction.prepareCommit()
        // A migration is not an edit: `now()` keeps the time of the last real change.
        for (key, field, value) in keptNow {
            guard var row = try transaction.row(key) else { continue }
            row[field] = value
            try transaction.write(key, row)
        }
        try transaction.flushRows()
        try transaction.flushWords()
        try meta.put(RecordTrees.schemaKey, Array(new.schemaLines.joined(separator: "\n").utf8))
        try RecordTrees.putModelVersion(new.version, in: meta)
        progress.tell(.finished, done: total, of: total)
    }
}
