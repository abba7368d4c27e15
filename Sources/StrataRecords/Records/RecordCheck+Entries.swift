import Foundation
import StrataStorage

/// The checker's view of the trees beside the rows: their names, the meta tree and key
/// counters, and every entry tree (indexes, uniqueness, inverses, joins, extremes) against the
/// entries the rows call for.
extension RecordCheck {
    // MARK: Tree names and the meta tree

    /// The names of the trees the model's record layer may hold.
    var expectedTreeNames: Set<String> {
        var names: Set<String> = [RecordTrees.meta]
        for e in model.entities {
            names.insert(RecordTrees.rows(e))
            for i in e.indexFields.indices { names.insert(RecordTrees.index(e, i)) }
            for i in e.uniqueFields.indices { names.insert(RecordTrees.unique(e, i)) }
            for (f, _) in e.toOneFields { names.insert(RecordTrees.inverse(e, f)) }
            for rel in e.relationships where rel.isManyToMany { names.insert(RecordTrees.join(e, rel.name)) }
            for d in e.derivedAttributes {
                if case .aggregate(let f, _, _) = d.parsed, f == .min || f == .max { names.insert(RecordTrees.extremes(e, d.name)) }
            }
        }
        return names
    }

    /// Record-looking trees that belong to nothing in the model (a renamed or stray tree).
    func checkTreeNames() throws {
        let all: [String]
        switch source {
        case .read(let tx): all = try tx.treeNames
        case .write(let tx): all = try tx.treeNames
        }
        let expected = expectedTreeNames
        for name in all where (RecordTrees.isRecordTreeName(name) || name.hasPrefix("records:")) && !expected.contains(name) {
            report("tree \(name) looks like a record tree but belongs to nothing in the model")
        }
    }

    /// The stored model text, the key counters, the key format version, and nothing else in
    /// `records:meta`.
    func checkMeta() throws {
        var counters: [String: [UInt8]] = [:]
        var schema: [UInt8]?
        try source.scan(RecordTrees.meta, prefix: []) { key, cursor in
            let k = [UInt8](key)
            if k == RecordTrees.schemaKey {
                schema = try cursor.copyValue()
            } else if k == KeyFormat.metaKey {
                // Opening upgrades older keys and refuses newer ones, so a checked store holds
                // the current version.
                let version = try cursor.copyValue()
                if version != [KeyFormat.current] {
                    report("\(RecordTrees.meta): the key format entry is \(version), expected [\(KeyFormat.current)]")
                }
            } else if k.starts(with: Array("next:".utf8)) {
                counters[String(decoding: k.dropFirst(5), as: UTF8.self)] = try cursor.copyValue()
            } else {
                report("\(RecordTrees.meta) holds an unknown key \(Self.printable(k))")
            }
            return true
        }
        if let schema {
            // A model rebuilt from the stored text (the tool's) is compared with the text it was
            // read from: whether it prints that text back is a property of the reader, not of
            // the store (Model.schemaLinesReadDifferently). A change of text since the open (a
            // migration beside the check) is still a difference.
            let expected = model.storedSchemaLines ?? model.schemaLines
            if String(decoding: schema, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init) != expected {
                report("\(RecordTrees.meta): the stored schema is not the model's")
            }
        } else {
            report("\(RecordTrees.meta) holds no schema")
        }
        for name in counters.keys.sorted() where model.entity(name) == nil {
            report("\(RecordTrees.meta) holds a key counter next:\(name) for an entity the model does not have")
        }
        for e in model.entities { checkCounter(e, stored: counters[e.name]) }
    }

    /// The next primary key of `e`: above every key in use, and not the last one (an insert
    /// could not allocate it). A transaction's counter moves in memory until its commit.
    func checkCounter(_ e: EntityDescription, stored: [UInt8]?) {
        let largest = entities[e.index].keys.last
        var next: UInt64
        if let counted = transaction?.nextPrimaryKeys[e.index] {
            next = counted
        } else if let stored {
            guard stored.count == 8 else {
                report("\(RecordTrees.meta): the key counter next:\(e.name) is \(stored.count) bytes, not 8")
                return
            }
            next = KeyEncoding.decodePrimaryKey(stored)
        } else {
            if let largest { report("\(RecordTrees.meta) has no key counter next:\(e.name), but \(e.name)/\(largest) exists") }
            return
        }
        if let largest, next <= largest {
            report("\(RecordTrees.meta): the key counter next:\(e.name) (\(next)) is not above the largest key in use (\(largest))")
        } else if next == .max {
            report("\(RecordTrees.meta): the key counter next:\(e.name) is exhausted (\(next))")
        }
    }

    // MARK: Entry trees

    /// Indexes: one entry per row (its values, then its key), nothing else.
    func checkIndexes(_ e: EntityDescription) throws {
        let rows = entities[e.index]
        for (i, fields) in e.indexFields.enumerated() {
            var expected = Set<[UInt8]>(minimumCapacity: rows.rows.count)
            for (n, r) in rows.rows.enumerated() { expected.insert(KeyEncoding.indexKey(fields.map { r[$0] }, pk: rows.keys[n])) }
            try compare(tree: RecordTrees.index(e, i), expected: expected, what: "index (\(e.indexes[i].joined(separator: ", ")))")
        }
    }

    /// Uniqueness: the constrained values of every row without a nil among them → its primary
    /// key, in both directions, and no two rows alike. A write transaction moves these entries
    /// at commit, so inside one they are checked against the rows as it found them.
    func checkUniqueness(_ e: EntityDescription) throws {
        guard !e.uniqueFields.isEmpty else { return }
        let rows = uniquenessRows(e)
        for (i, fields) in e.uniqueFields.enumerated() {
            let tree = RecordTrees.unique(e, i)
            let what = "uniqueness (\(e.uniquenessConstraints[i].joined(separator: ", ")))"
            var owners: [[UInt8]: UInt64] = [:]
            for (pk, r) in rows {
                guard let (k, whole) = RecordTrees.uniqueKey(fields.map { r[$0] }) else { continue }
                if !whole { report("\(e.name)/\(pk): a value of \(what) is longer than \(KeyEncoding.maxValueBytes) bytes, which a commit refuses") }
                if let other = owners.updateValue(pk, forKey: k) {
                    report("\(e.name)/\(pk) and \(e.name)/\(other) break the \(what)")
                }
            }
            var matched = 0, extra = 0
            try source.scan(tree, prefix: []) { key, cursor in
                let k = [UInt8](key)
                guard let owner = owners[k] else {
                    extra += 1
                    return true
                }
                matched += 1
                let value = try cursor.copyValue()
                if value.count != 8 {
                    report("\(tree): an entry's value is \(value.count) bytes, not the 8 of the primary key of \(e.name)/\(owner), which holds those values (\(what))")
                } else if KeyEncoding.decodePrimaryKey(value) != owner {
                    report("\(tree): an entry names \(e.name)/\(KeyEncoding.decodePrimaryKey(value)) as its owner, but \(e.name)/\(owner) holds those values (\(what))")
                }
                return true
            }
            reportCounts(tree, missing: owners.count - matched, extra: extra, what: what)
        }
    }

    /// The rows a uniqueness tree reflects: the stored rows, except that inside a write
    /// transaction rows it inserted are left out and rows it changed or deleted count as the
    /// transaction found them (their entries move at commit).
    func uniquenessRows(_ e: EntityDescription) -> [(UInt64, [StoredValue])] {
        let rows = entities[e.index]
        guard let tx = transaction else { return Array(zip(rows.keys, rows.rows)) }
        var out: [(UInt64, [StoredValue])] = []
        for (n, pk) in rows.keys.enumerated() where tx.original(RowKey(entity: e.index, pk: pk)) == nil {
            out.append((pk, rows.rows[n]))
        }
        for key in tx.writtenKeys[e.index] {
            if let original = tx.rowStates[key]?.original { out.append((key.pk, original)) }
        }
        return out
    }

    /// Inverses of to-one relationships: (target, row) for every row whose relationship is
    /// set, nothing else.
    func checkInverses(_ e: EntityDescription) throws {
        let rows = entities[e.index]
        for (f, _) in e.toOneFields {
            var expected = Set<[UInt8]>()
            for (n, r) in rows.rows.enumerated() {
                guard case .int(let p) = r[f] else { continue }
                expected.insert(RecordTrees.pair(UInt64(bitPattern: p), rows.keys[n]))
            }
            try compare(tree: RecordTrees.inverse(e, f), expected: expected, what: "inverse of \(e.fields[f].name)")
        }
    }

    /// Many-to-many: every link between existing rows, stored on both sides. Each join tree is
    /// read once, in key order; the two sides of a relationship are compared by a merge of one
    /// side's pairs with the other's, swapped and sorted (no lookup per link).
    func checkJoins(_ e: EntityDescription) throws {
        for rel in e.relationships where rel.isManyToMany {
            let t = model.entities[rel.targetIndex]
            let tree = RecordTrees.join(e, rel.name)
            let here = entities[e.index], there = entities[t.index]
            var pairs: [JoinPair] = []
            var nonEmpty = 0, dangling = 0
            try source.scan(tree, prefix: []) { key, cursor in
                let a = try RecordTrees.primaryKey(key, at: 0, exactLength: 16, tree: tree)
                let b = try RecordTrees.primaryKey(key, at: 8, exactLength: 16, tree: tree)
                if !cursor.value.isEmpty || cursor.isOverflow { nonEmpty += 1 }
                if here.row(a) == nil || there.row(b) == nil {
                    if dangling == 0 { report("\(tree): links \(e.name)/\(a) and \(t.name)/\(b), one of which does not exist") }
                    dangling += 1
                }
                pairs.append(JoinPair(a, b))
                return true
            }
            if dangling > 1 { report("\(tree): \(dangling) links in all name a row that does not exist") }
            if nonEmpty > 0 { report("\(tree): \(nonEmpty) entr\(nonEmpty == 1 ? "y has" : "ies have") a value; join entries are empty") }
            links[tree] = pairs
        }
        // The two sides of a relationship, once both are read: when the loop reaches the later
        // of the two entities (and, within one entity, from the side whose tree sorts first).
        for rel in e.relationships where rel.isManyToMany {
            let t = model.entities[rel.targetIndex]
            let tree = RecordTrees.join(e, rel.name), mirror = RecordTrees.join(t, rel.inverse)
            guard t.index < e.index || (t.index == e.index && tree <= mirror),
                  let here = links[tree], let there = links[mirror] else { continue }
            let swapped = there.map { JoinPair($0.b, $0.a) }.sorted()
            let (onlyHere, onlyThere) = JoinPair.difference(here, swapped)
            if onlyHere > 0 { report("\(tree): \(onlyHere) link\(onlyHere == 1 ? " has" : "s have") no entry in \(mirror)") }
            if onlyThere > 0 { report("\(mirror): \(onlyThere) link\(onlyThere == 1 ? " has" : "s have") no entry in \(tree)") }
        }
    }

    /// `@min`/`@max` bookkeeping: (parent, child value, child) for every member with a value.
    func checkExtremes(_ e: EntityDescription) throws {
        for d in e.derivedAttributes {
            guard case .aggregate(let f, let relName, let attr?) = d.parsed, f == .min || f == .max,
                  let rel = e.relationship(relName) else { continue }
            let c = model.entities[rel.targetIndex]
            guard let source = c.fieldIndex[attr] else { continue }
            var expected = Set<[UInt8]>()
            for (parent, members) in try membership(rel, of: e) {
                for m in members {
                    let v = entities[c.index].rows[m][source]
                    if v.isNull { continue }
                    expected.insert(RecordTrees.extremesKey(parent: parent, value: v, child: entities[c.index].keys[m]))
                }
            }
            try compare(tree: RecordTrees.extremes(e, d.name), expected: expected, what: "@\(f == .min ? "min" : "max") bookkeeping of \(d.name)")
        }
    }

    /// The members of every parent of `e` through the to-many `rel`, as positions in the
    /// target's rows: from the children's to-one fields, or from `e`'s side of the join.
    func membership(_ rel: ResolvedRelationship, of e: EntityDescription) throws -> [UInt64: [Int]] {
        let c = model.entities[rel.targetIndex]
        if let fk = rel.inverseField {
            if let known = children[c.index]?[fk] { return known }
            var groups: [UInt64: [Int]] = [:]
            for (n, r) in entities[c.index].rows.enumerated() {
                if case .int(let p) = r[fk] { groups[UInt64(bitPattern: p), default: []].append(n) }
            }
            children[c.index, default: [:]][fk] = groups
            return groups
        }
        let here = entities[e.index], targets = entities[c.index]
        var groups: [UInt64: [Int]] = [:]
        for p in links[RecordTrees.join(e, rel.name)] ?? [] {
            // Links to rows that do not exist are reported above; they count for nothing.
            guard here.row(p.a) != nil, let m = targets.position[p.b] else { continue }
            groups[p.a, default: []].append(m)
        }
        return groups
    }

    /// Compares a tree whose values are empty with the exact set of keys it must hold.
    func compare(tree: String, expected: Set<[UInt8]>, what: String) throws {
        var matched = 0, extra = 0, nonEmpty = 0
        try source.scan(tree, prefix: []) { key, cursor in
            if expected.contains([UInt8](key)) { matched += 1 } else { extra += 1 }
            if !cursor.value.isEmpty || cursor.isOverflow { nonEmpty += 1 }
            return true
        }
        reportCounts(tree, missing: expected.count - matched, extra: extra, what: what)
        if nonEmpty > 0 { report("\(tree): \(nonEmpty) entr\(nonEmpty == 1 ? "y has" : "ies have") a value; its entries are empty (\(what))") }
    }

    func reportCounts(_ tree: String, missing: Int, extra: Int, what: String) {
        if missing > 0 { report("\(tree): \(missing) entr\(missing == 1 ? "y" : "ies") missing (\(what))") }
        if extra > 0 { report("\(tree): \(extra) entr\(extra == 1 ? "y" : "ies") that no row accounts for (\(what))") }
    }

    static func printable(_ bytes: [UInt8]) -> String {
        if let s = String(validating: bytes, as: UTF8.self), s.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) { return "'\(s)'" }
        return bytes.map { String(format: "%02x", $0) }.joined()
    }
}
