import Foundation
import StrataStorage

/// Computes derived attributes at commit from what the transaction changed, in dependency
/// order, as deltas: counts and sums adjust by what entered and left a relationship, strings
/// and arithmetic are recomputed only for rows whose sources changed, and copies through
/// to-one fan out to the rows that point at a changed object. Nothing here scans a
/// relationship; the cost follows the change set (plus the fan-out a changed copy source has).
struct DerivationEngine {
    let tx: RecordTransaction
    let timestamp: Date
    var model: Model { tx.model }

    func run() throws {
        let order = model.derivationOrder
        var i = 0
        while i < order.count {
            let e = model.entities[order[i].entity]
            let d = e.derivedAttributes[order[i].derived]
            i += 1
            guard case .aggregate(let f, let relName, let attr) = d.parsed else {
                try recompute(e, d)
                continue
            }
            let rel = e.relationship(relName)!
            let source = attr.map { model.entities[rel.targetIndex].fieldIndex[$0]! }
            if rel.isManyToMany {
                try aggregateManyToMany(e, d, f, rel, source)
                continue
            }
            // The aggregates over the same to-many that come next in dependency order depend
            // on nothing computed in between: one pass over the children serves them all.
            var members = [AggregateMember(derived: d, function: f, source: source)]
            while i < order.count, order[i].entity == e.index {
                let next = e.derivedAttributes[order[i].derived]
                guard case .aggregate(let g, let name, let a) = next.parsed, name == relName else { break }
                members.append(AggregateMember(derived: next, function: g, source: a.map { model.entities[rel.targetIndex].fieldIndex[$0]! }))
                i += 1
            }
            try aggregateToMany(e, members, rel)
        }
    }

    // MARK: Change set

    /// Whether field `f` of the touched row `key` differs from its value at the start.
    func changed(_ key: RowKey, _ f: Int) throws -> Bool {
        guard let original = tx.original(key) else { return false }
        guard let o = original, let c = try tx.row(key) else { return true }
        return o[f] != c[f]
    }

    func touched(_ entity: Int) -> [RowKey] { tx.touched(entity) }

    // MARK: Row-local derived attributes (copies, string functions, arithmetic, now())

    func recompute(_ e: EntityDescription, _ d: DerivedDescription) throws {
        var candidates = Set<RowKey>()
        let isNow = d.parsed == .now
        let paths = d.parsed.paths
        for key in touched(e.index) {
            // Touched rows are all in the transaction's states: one lookup each.
            guard let state = tx.rowStates[key], state.current != nil else { continue }
            if state.original == nil { candidates.insert(key); continue }
            if isNow {
                if tx.explicitlyChanged.contains(key), try e.fields.indices.contains(where: { i in
                    switch e.fields[i].kind {
                    case .attribute, .toOne: return try changed(key, i)
                    default: return false
                    }
                }) { candidates.insert(key) }
                continue
            }
            for path in paths where state.original![e.fieldIndex[path[0]]!] != state.current![e.fieldIndex[path[0]]!] {
                candidates.insert(key)
                break
            }
        }
        if !isNow {
            for path in paths where path.count > 1 { try fanOut(e, path, into: &candidates) }
        }
        for key in candidates.sorted(by: { $0.pk < $1.pk }) {
            guard let r = try tx.row(key) else { continue }
            let v = isNow ? Value.date(timestamp) : try evaluate(d.parsed, key, e, declared: d)
            if r[d.field] != v { try tx.setFields(key, [(d.field, v)]) }
        }
    }

    /// Adds to `candidates` the rows of `e` whose `path` (to-one hops, then an attribute)
    /// reaches a row whose watched field changed: the attribute at the end, or a hop on the way.
    func fanOut(_ e: EntityDescription, _ path: [String], into candidates: inout Set<RowKey>) throws {
        var entities = [e.index]
        for hop in path.dropLast() { entities.append(model.entities[entities.last!].relationship(hop)!.targetIndex) }
        for level in 1..<path.count {
            let t = model.entities[entities[level]]
            let watched = t.fieldIndex[path[level]]!
            for key in touched(t.index) where try tx.row(key) != nil && changed(key, watched) {
                var frontier = [key.pk]
                for m in stride(from: level - 1, through: 0, by: -1) {
                    let owner = model.entities[entities[m]]
                    let fk = owner.fieldIndex[path[m]]!
                    var next: [UInt64] = []
                    for pk in frontier { next += try tx.source.keys(RecordTrees.inverse(owner, fk), prefix: KeyEncoding.primaryKey(pk)) }
                    frontier = next
                }
                for pk in frontier { candidates.insert(RowKey(entity: e.index, pk: pk)) }
            }
        }
    }

    func evaluate(_ x: DerivedExpression, _ key: RowKey, _ e: EntityDescription, declared d: DerivedDescription) throws -> Value {
        DerivationEngine.coerce(try DerivedEvaluator(tx: tx, entity: e, property: d.name).value(of: x, at: key), to: d)
    }

    /// Converts a computed value to the attribute's declared type.
    static func coerce(_ v: Value, to d: DerivedDescription) -> Value {
        if v.isNull { return .null }
        if d.type.isInteger, case .double(let x) = v {
            // Integer attributes take integer division (toward zero), like Swift's `/`.
            let t = x.rounded(.towardZero)
            guard t.isFinite, let r = d.type.integerRange, t >= Double(r.lowerBound), t <= Double(r.upperBound) else { return .null }
            return .int(Int64(t))
        }
        return d.type.coerce(v) ?? .null
    }
}
