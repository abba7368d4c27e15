import Foundation
import StrataStorage

extension RecordReader {
    /// Verifies the record layer from scratch: every row decodes; every index, uniqueness,
    /// inverse and join entry matches the rows (nothing missing, nothing extra, no dangling
    /// reference); and every derived value equals its recomputation from the rows. Returns the
    /// problems found (empty: consistent). Reads everything: cost is the size of the store.
    public func checkRecords(limit: Int = 100) throws -> [String] {
        var problems: [String] = []
        func report(_ s: String) { if problems.count < limit { problems.append(s) } }
        try willScanRows()
        var rowsByEntity: [[(UInt64, [Value])]] = []
        for e in model.entities {
            var rows: [(UInt64, [Value])] = []
            var keys: [UInt64] = []
            try source.scan(RecordTrees.rows(e), prefix: []) { key, _ in
                keys.append(KeyEncoding.decodePrimaryKey(key))
                return true
            }
            for pk in keys {
                do {
                    if let r = try row(RowKey(entity: e.index, pk: pk)) { rows.append((pk, r)) }
                } catch {
                    report("\(e.name)/\(pk): row does not decode: \(error)")
                }
            }
            rowsByEntity.append(rows)
        }
        for e in model.entities {
            let rows = rowsByEntity[e.index]
            // Fetch indexes.
            for (i, fields) in e.indexFields.enumerated() {
                let expected = Set(rows.map { (pk, r) in KeyEncoding.indexKey(fields.map { r[$0] }, pk: pk) })
                try compare(tree: RecordTrees.index(e, i), expected: expected, what: "index (\(e.indexes[i].joined(separator: ", ")))", report)
            }
            // Uniqueness.
            for (i, fields) in e.uniqueFields.enumerated() {
                var expected = Set<[UInt8]>()
                var owners: [[UInt8]: UInt64] = [:]
                for (pk, r) in rows {
                    let values = fields.map { r[$0] }
                    if values.contains(where: \.isNull) { continue }
                    var k: [UInt8] = []
                    for v in values { KeyEncoding.append(v, to: &k) }
                    if let other = owners.updateValue(pk, forKey: k) {
                        report("\(e.name)/\(pk) and \(e.name)/\(other) break the uniqueness of (\(e.uniquenessConstraints[i].joined(separator: ", ")))")
                    }
                    expected.insert(k)
                }
                try compare(tree: RecordTrees.unique(e, i), expected: expected, what: "uniqueness (\(e.uniquenessConstraints[i].joined(separator: ", ")))", report)
            }
            // To-one relationships and their inverse trees.
            for (f, field) in e.fields.enumerated() {
                guard case .toOne(let t) = field.kind else { continue }
                let targets = Set(rowsByEntity[t].map(\.0))
                var expected = Set<[UInt8]>()
                for (pk, r) in rows {
                    guard case .int(let p) = r[f] else { continue }
                    let target = UInt64(bitPattern: p)
                    if !targets.contains(target) { report("\(e.name)/\(pk).\(field.name) points at \(model.entities[t].name)/\(target), which does not exist") }
                    expected.insert(RecordTrees.pair(target, pk))
                }
                try compare(tree: RecordTrees.inverse(e, f), expected: expected, what: "inverse of \(field.name)", report)
            }
            // Many-to-many: each link stored both ways, between existing rows.
            for rel in e.relationships where rel.isManyToMany {
                let here = Set(rows.map(\.0)), there = Set(rowsByEntity[rel.targetIndex].map(\.0))
                let t = model.entities[rel.targetIndex]
                try source.scan(RecordTrees.join(e, rel.name), prefix: []) { key, _ in
                    let a = KeyEncoding.decodePrimaryKey(UnsafeRawBufferPointer(rebasing: key[0..<8]))
                    let b = KeyEncoding.decodePrimaryKey(UnsafeRawBufferPointer(rebasing: key[8..<16]))
                    if !here.contains(a) || !there.contains(b) { report("join \(e.name).\(rel.name) links \(a) and \(b), one of which does not exist") }
                    if (try? source.get(RecordTrees.join(t, rel.inverse), RecordTrees.pair(b, a))) == nil { report("join \(e.name).\(rel.name) (\(a), \(b)) has no inverse entry") }
                    return true
                }
            }
            // Derived values against a recomputation from scratch.
            for d in e.derivedAttributes {
                for (pk, r) in rows {
                    let key = RowKey(entity: e.index, pk: pk)
                    let stored = r[d.field]
                    let expected: Value
                    switch d.parsed {
                    case .now:
                        if stored.isNull && !d.isOptional { report("\(e.name)/\(pk).\(d.name) (now()) is not set") }
                        continue
                    case .aggregate(let f, let relName, let attr):
                        expected = try recomputeAggregate(f, e.relationship(relName)!, attr, of: key, declared: d)
                    default:
                        expected = try DerivationEngine.coerce(DerivedEvaluator(tx: self, entity: e, property: d.name).value(of: d.parsed, at: key), to: d)
                    }
                    if !DerivedComparison.agree(stored, expected) {
                        report("\(e.name)/\(pk).\(d.name) = \(stored), recomputed from scratch: \(expected)")
                    }
                }
            }
        }
        return problems
    }

    private func compare(tree: String, expected: Set<[UInt8]>, what: String, _ report: (String) -> Void) throws {
        var found = Set<[UInt8]>()
        try source.scan(tree, prefix: []) { key, _ in
            found.insert([UInt8](key))
            return true
        }
        let missing = expected.subtracting(found).count, extra = found.subtracting(expected).count
        if missing > 0 { report("\(tree): \(missing) entr\(missing == 1 ? "y" : "ies") missing (\(what))") }
        if extra > 0 { report("\(tree): \(extra) entr\(extra == 1 ? "y" : "ies") that no row accounts for (\(what))") }
    }

    /// An aggregate computed by reading every member.
    func recomputeAggregate(_ f: AggregateFunction, _ rel: RelationshipDescription, _ attr: String?, of key: RowKey,
                            declared d: DerivedDescription) throws -> Value {
        let members = try memberKeys(rel, of: key)
        if f == .count { return .int(Int64(members.count)) }
        let t = model.entities[rel.targetIndex]
        let field = t.fieldIndex[attr!]!
        var values: [Value] = []
        for pk in members {
            if let r = try row(RowKey(entity: t.index, pk: pk)), !r[field].isNull { values.append(r[field]) }
        }
        switch f {
        case .count: return .int(Int64(members.count))
        case .sum, .avg:
            if f == .avg && values.isEmpty { return .null }
            let total: Value
            if t.fields[field].type.isInteger {
                var s: Int64 = 0
                for v in values { if case .int(let i) = v { s = s &+ i } }
                total = .int(s)
            } else if t.fields[field].type == .decimal {
                var s: Decimal = 0
                for v in values { if case .decimal(let x) = v { s += x } }
                total = .decimal(s)
            } else {
                // Exact enough as a reference: sum the doubles in decimal.
                var s: Decimal = 0
                for v in values { if case .double(let x) = v { s += Decimal(x) } }
                total = .double(NSDecimalNumber(decimal: s).doubleValue)
            }
            if f == .sum { return d.type.coerce(total) ?? total }
            let n = Decimal(values.count)
            let exact: Decimal = { switch total { case .int(let i): return Decimal(i); case .decimal(let x): return x; case .double(let x): return Decimal(x); default: return 0 } }()
            return d.type == .decimal ? .decimal(exact / n) : .double(NSDecimalNumber(decimal: exact / n).doubleValue)
        case .min, .max:
            guard var best = values.first else { return .null }
            for v in values.dropFirst() {
                let c = Value.compare(v, best) ?? 0
                if f == .min ? c < 0 : c > 0 { best = v }
            }
            return d.type.coerce(best) ?? best
        }
    }
}

/// Whether a stored derived value agrees with its recomputation: exactly, except doubles,
/// which may differ by 1e-9 of their magnitude (compensated running sums).
enum DerivedComparison {
    static func agree(_ a: Value, _ b: Value) -> Bool {
        if a == b { return true }
        if case .double(let x) = a, case .double(let y) = b {
            return abs(x - y) <= 1e-9 * max(abs(x), abs(y), 1e-300) || abs(x - y) < 1e-12
        }
        if case .decimal(let x) = a, case .decimal(let y) = b {
            // Decimal division keeps 38 digits; two routes to an average may differ in the last.
            let diff = abs(NSDecimalNumber(decimal: x - y).doubleValue)
            return diff <= 1e-30 * max(abs(NSDecimalNumber(decimal: x).doubleValue), 1)
        }
        return false
    }
}
