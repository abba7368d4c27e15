import Foundation
import StrataStorage

/// A lightweight migration: rows move field by field (by name, or by renaming identifier) from
/// the stored model's layout to the new one; every derived value, index, uniqueness entry and
/// inverse is then rebuilt from the rows, exactly as if they were inserted.
struct Migration {
    let old: Model
    let new: Model

    /// The stored entity a new entity continues.
    func source(of e: EntityDescription) -> EntityDescription? {
        old.entity(e.renamingIdentifier ?? e.name) ?? old.entity(e.name)
    }

    /// The stored field a new field continues, if any.
    func source(of f: Field, in o: EntityDescription) -> Int? {
        for name in [f.renamedFrom, f.name].compactMap({ $0 }) {
            if let i = o.fieldIndex[name], o.fields[i].kind != .auxiliary { return i }
        }
        return nil
    }

    /// Checks that every kept field can carry its values over.
    func checkCompatible() throws {
        var problems: [String] = []
        for e in new.entities {
            guard let o = source(of: e) else { continue }
            for f in e.fields where f.kind == .attribute {
                guard let i = source(of: f, in: o), o.fields[i].kind == .attribute else { continue }
                let from = o.fields[i].type, to = f.type
                let widening = from.isInteger && to.isInteger && (to.integerRange!.lowerBound <= from.integerRange!.lowerBound)
                if from != to && !widening {
                    problems.append("\(e.name).\(f.name): type changed from \(from.rawValue) to \(to.rawValue); a lightweight migration cannot convert values")
                }
            }
            for f in e.fields {
                guard case .toOne(let t) = f.kind, let i = source(of: f, in: o), case .toOne(let ot) = o.fields[i].kind else { continue }
                if source(of: new.entities[t])?.index != ot {
                    problems.append("\(e.name).\(f.name): the relationship now points at another entity")
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
            for e in new.entities {
                guard let o = source(of: e) else { continue }
                var list: [(UInt64, [StoredValue])] = []
                for id in try reader.objects(o.name) {
                    if let r = try reader.row(RowKey(entity: o.index, pk: id.primaryKey)) { list.append((id.primaryKey, r)) }
                }
                rows[e.index] = list
                if let next = try meta.get(RecordTrees.nextKey(o)) { counters[e.index] = try RecordTrees.storedPrimaryKey(next, tree: RecordTrees.meta) }
                for rel in e.relationships where rel.isManyToMany {
                    guard let orel = o.relationship(rel.renamedFrom ?? rel.name) ?? o.relationship(rel.name), orel.isManyToMany else { continue }
                    // One side is enough: linking writes both join trees.
                    guard e.index <= rel.targetIndex else { continue }
                    for id in try reader.objects(o.name) {
                        for other in try reader.memberKeys(orel, of: RowKey(entity: o.index, pk: id.primaryKey)) {
                            links.append((rel, e, id.primaryKey, other))
                        }
                    }
                }
            }
            for o in old.entities { _ = try meta.delete(RecordTrees.nextKey(o)) }
            for name in try tx.treeNames where RecordTrees.dataTreePrefixes.contains(where: { name.hasPrefix($0) }) {
                try tx.dropTree(name)
            }
            // The rows again, in the new layout, as inserts: the commit derives everything.
            let rtx = RecordTransaction(model: new, tx: tx)
            var keptNow: [(RowKey, Int, StoredValue)] = []
            for e in new.entities {
                guard let o = source(of: e), let list = rows[e.index] else { continue }
                for (pk, r) in list {
                    var values = e.fields.map { $0.defaultValue ?? .null }
                    for (i, f) in e.fields.enumerated() {
                        switch f.kind {
                        case .attribute, .toOne:
                            if let j = source(of: f, in: o) { values[i] = r[j] }
                        case .derived, .auxiliary:
                            break
                        }
                    }
                    for d in e.derivedAttributes {
                        if case .aggregate(let fn, _, _) = d.parsed, fn == .count || fn == .sum {
                            values[d.field] = d.type == .decimal ? .decimal(0) : (d.type == .double ? .double(0) : .int(0))
                        }
                        if d.parsed == .now, let j = source(of: e.fields[d.field], in: o), !r[j].isNull {
                            keptNow.append((RowKey(entity: e.index, pk: pk), d.field, r[j]))
                        }
                    }
                    try rtx.write(RowKey(entity: e.index, pk: pk), values)
                }
                if let next = counters[e.index] { rtx.nextPrimaryKeys[e.index] = next }
            }
            for (rel, e, a, b) in links {
                try rtx.link(rel, RowKey(entity: e.index, pk: a), RowKey(entity: rel.targetIndex, pk: b), add: true)
            }
            try rtx.prepareCommit()
            // A migration is not an edit: `now()` keeps the time of the last real change.
            for (key, field, value) in keptNow {
                guard var r = try rtx.row(key) else { continue }
                r[field] = value
                try rtx.write(key, r)
            }
            try rtx.flushRows()
            try meta.put(RecordTrees.schemaKey, Array(new.schemaLines.joined(separator: "\n").utf8))
        }
    }
}
