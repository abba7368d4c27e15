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
                keys.append(try RecordTrees.primaryKey(key, at: 0, exactLength: 8, tree: RecordTrees.rows(e)))
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
                let tree = RecordTrees.join(e, rel.name)
                try source.scan(tree, prefix: []) { key, _ in
                    let a = try RecordTrees.primaryKey(key, at: 0, exactLength: 16, tree: tree)
                    let b = try RecordTrees.primaryKey(key, at: 8, exactLength: 16, tree: tree)
                    if !here.contains(a) || !there.contains(b) { report("join \(e.name).\(rel.name) links \(a) and \(b), one of which does not exist") }
                    if (try? source.get(RecordTrees.join(t, rel.inverse), RecordTrees.pair(b, a))) == nil { report("join \(e.name).\(rel.name) (\(a), \(b)) has no inverse entry") }
                    return true
                }
            }
            // Derived values against a recomputation from scratch, by the same arithmetic.
            for d in e.derivedAttributes {
                let tolerant = DerivedComparison.isInexact(d)
                for (pk, r) in rows {
                    let key = RowKey(entity: e.index, pk: pk)
                    let stored = r[d.field]
                    let expected: Value
                    do {
                        switch d.parsed {
                        case .now:
                            if stored.isNull && !d.isOptional { report("\(e.name)/\(pk).\(d.name) (now()) is not set") }
                            continue
                        case .aggregate(let f, let relName, let attr):
                            expected = try recomputeAggregate(f, e.relationship(relName)!, attr, of: key, in: e, declared: d)
                        default:
                            expected = try DerivedEvaluator(tx: self, entity: e, property: d.name).value(of: d.parsed, at: key, as: d.type)
                        }
                    } catch StrataError.validation(_, _, let reason) {
                        report("\(e.name)/\(pk).\(d.name) = \(stored), but recomputing it from scratch fails: \(reason)")
                        continue
                    }
                    if !DerivedComparison.agree(stored, expected, tolerant: tolerant) {
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

    /// An aggregate computed by reading every member, by ``AggregateArithmetic``, converted to
    /// the declared type as the engine converts it.
    func recomputeAggregate(_ f: AggregateFunction, _ rel: RelationshipDescription, _ attr: String?, of key: RowKey,
                            in e: EntityDescription, declared d: DerivedDescription) throws -> Value {
        let members = try memberKeys(rel, of: key)
        do {
            if f == .count { return try DerivedValues.convert(.int(Int64(members.count)), to: d.type) }
            let t = model.entities[rel.targetIndex]
            let field = t.fieldIndex[attr!]!
            var values: [Value] = []
            for pk in members {
                if let r = try row(RowKey(entity: t.index, pk: pk)), !r[field].isNull { values.append(r[field]) }
            }
            switch f {
            case .count, .sum:
                return try DerivedValues.convert(try AggregateArithmetic.sum(values)?.total ?? .int(0), to: d.type)
            case .avg:
                guard let (total, count) = try AggregateArithmetic.sum(values) else { return .null }
                return try AggregateArithmetic.mean(sum: total, count: count, as: d.type)
            case .min, .max:
                return try DerivedValues.convert(AggregateArithmetic.extreme(values, max: f == .max), to: d.type)
            }
        } catch let overflow as AggregateArithmetic.Overflow {
            throw StrataError.validation(entity: e.name, property: d.name, reason: "\(overflow.reason) in \(d.expression)")
        }
    }
}

/// Whether a stored derived value agrees with its recomputation: exactly, except the sums and
/// averages of doubles, whose compensated running sums may differ from a sum from scratch in
/// the last bits (by at most 1e-9 of the magnitude).
enum DerivedComparison {
    static func agree(_ a: Value, _ b: Value, tolerant: Bool = true) -> Bool {
        if a == b { return true }
        if tolerant, case .double(let x) = a, case .double(let y) = b {
            return abs(x - y) <= 1e-9 * max(abs(x), abs(y), 1e-300) || abs(x - y) < 1e-12
        }
        if tolerant, case .decimal(let x) = a, case .decimal(let y) = b,
           let dx = ExactConversion.nearestDouble(x), let dy = ExactConversion.nearestDouble(y) {
            return abs(dx - dy) <= 1e-9 * max(abs(dx), abs(dy), 1e-300) || abs(dx - dy) < 1e-12
        }
        return false
    }

    /// Whether `d` is a sum or average over doubles: the one inexact aggregate.
    static func isInexact(_ d: DerivedDescription) -> Bool {
        guard case .aggregate(let f, _, _) = d.parsed, f == .sum || f == .avg else { return false }
        return d.aggregateSourceType == .double
    }
}
