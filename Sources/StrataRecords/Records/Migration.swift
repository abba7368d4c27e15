import Foundation
import StrataStorage

/// A lightweight migration: rows move field by field (by name, or by renaming identifier) from
/// the stored model's layout to the new one; every derived value, index, uniqueness entry and
/// inverse is then rebuilt from the rows, exactly as if they were inserted.
struct Migration {
    let old: Model
    let new: Model

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

    /// Checks that every kept field can carry its values over.
    func checkCompatible() throws {
        var problems: [String] = []
        for entity in new.entities {
            guard let stored = source(of: entity) else { continue }
            for field in entity.fields where field.kind == .attribute {
                guard let i = source(of: field, in: stored), stored.fields[i].kind == .attribute else { continue }
                let from = stored.fields[i].type, to = field.type
                let widening = from.isInteger && to.isInteger
                    && (to.integerRange!.lowerBound <= from.integerRange!.lowerBound)
                if from != to && !widening {
                    problems.append("\(entity.name).\(field.name): type changed from \(from.rawValue) to "
                                    + "\(to.rawValue); a lightweight migration cannot convert values")
                }
            }
            for field in entity.fields {
                guard case .toOne(let target) = field.kind, let i = source(of: field, in: stored),
                      case .toOne(let storedTarget) = stored.fields[i].kind else { continue }
                if source(of: new.entities[target])?.index != storedTarget {
                    problems.append("\(entity.name).\(field.name): the relationship now points at another entity")
                }
            }
        }
        if !problems.isEmpty { throw StrataError.modelMismatch(differences: problems) }
    }

    func run(_ storage: Store) throws {
        try checkCompatible()
        try storage.write { tx in
            // Everything the old layout holds, read before its trees go.
            let reader = RecordReader(model: old, source: .write(tx))
            var rows: [Int: [(UInt64, [StoredValue])]] = [:]
            var links: [(ResolvedRelationship, EntityDescription, UInt64, UInt64)] = []
            var counters: [Int: UInt64] = [:]
            let meta = try tx.tree(RecordTrees.meta, createIfMissing: true)!
            for entity in new.entities {
                guard let stored = source(of: entity) else { continue }
                var list: [(UInt64, [StoredValue])] = []
                for id in try reader.objects(stored.name) {
                    if let row = try reader.row(RowKey(entity: stored.index, pk: id.primaryKey)) {
                        list.append((id.primaryKey, row))
                    }
                }
                rows[entity.index] = list
                if let next = try meta.get(RecordTrees.nextKey(stored)) {
                    counters[entity.index] = try RecordTrees.storedPrimaryKey(next, tree: RecordTrees.meta)
                }
                for rel in entity.relationships where rel.isManyToMany {
                    guard let orel = stored.relationship(rel.renamedFrom ?? rel.name) ?? stored.relationship(rel.name),
                          orel.isManyToMany else { continue }
                    // One side is enough: linking writes both join trees.
                    guard entity.index <= rel.targetIndex else { continue }
                    for id in try reader.objects(stored.name) {
                        for other in try reader.memberKeys(orel, of: RowKey(entity: stored.index, pk: id.primaryKey)) {
                            links.append((rel, entity, id.primaryKey, other))
                        }
                    }
                }
            }
            for stored in old.entities { _ = try meta.delete(RecordTrees.nextKey(stored)) }
            for name in try tx.treeNames where RecordTrees.dataTreePrefixes.contains(where: { name.hasPrefix($0) }) {
                try tx.dropTree(name)
            }
            // The rows again, in the new layout, as inserts: the commit derives everything.
            let transaction = RecordTransaction(model: new, tx: tx)
            // A migration rewrites rows, it does not edit them: nothing for the history to hold.
            transaction.recordsHistory = false
            var keptNow: [(RowKey, Int, StoredValue)] = []
            for entity in new.entities {
                guard let stored = source(of: entity), let list = rows[entity.index] else { continue }
                for (pk, row) in list {
                    var values = entity.fields.map { $0.defaultValue ?? .null }
                    for (i, field) in entity.fields.enumerated() {
                        switch field.kind {
                        case .attribute, .toOne:
                            if let j = source(of: field, in: stored) { values[i] = row[j] }
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
                }
                if let next = counters[entity.index] { transaction.nextPrimaryKeys[entity.index] = next }
            }
            for (rel, entity, rowKey, otherKey) in links {
                try transaction.link(rel, RowKey(entity: entity.index, pk: rowKey),
                                     RowKey(entity: rel.targetIndex, pk: otherKey), add: true)
            }
            try transaction.prepareCommit()
            // A migration is not an edit: `now()` keeps the time of the last real change.
            for (key, field, value) in keptNow {
                guard var row = try transaction.row(key) else { continue }
                row[field] = value
                try transaction.write(key, row)
            }
            try transaction.flushRows()
            try meta.put(RecordTrees.schemaKey, Array(new.schemaLines.joined(separator: "\n").utf8))
        }
    }
}
