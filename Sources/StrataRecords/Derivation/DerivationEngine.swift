import Foundation
import StrataStorage

/// Computes derived attributes from what the transaction changed since it last settled (a read
/// through it, or the commit), in dependency order, as deltas: counts and sums adjust by what
/// entered and left a relationship, strings and arithmetic are recomputed only for rows whose
/// sources changed, and copies through to-one fan out to the rows that point at a changed
/// object. Nothing here scans a relationship; the cost follows the change set (plus the
/// fan-out a changed copy source has). "Before" is each row as of the last settle.
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
            // Except over a to-many of the entity itself (a tree): an aggregate of the group's
            // own result (`children.low.@max` after `children.value.@min`) needs that result
            // settled on the children first, so it starts a pass of its own.
            var members = [AggregateMember(derived: d, function: f, source: source)]
            while i < order.count, order[i].entity == e.index {
                let next = e.derivedAttributes[order[i].derived]
                guard case .aggregate(let g, let name, let a) = next.parsed, name == relName else { break }
                let nextSource = a.map { model.entities[rel.targetIndex].fieldIndex[$0]! }
                if rel.targetIndex == e.index, let nextSource, members.contains(where: { $0.derived.field == nextSource }) { break }
                members.append(AggregateMember(derived: next, function: g, source: nextSource))
                i += 1
            }
            try aggregateToMany(e, members, rel)
        }
    }

    // MARK: Change set

    /// Whether field `f` of the touched row `key` differs from its value at the last settle.
    func changed(_ key: RowKey, _ f: Int) throws -> Bool {
        guard let settled = tx.settled(key) else { return false }
        guard let o = settled, let c = try tx.row(key) else { return true }
        return !o[f].isIdentical(to: c[f])
    }

    func touched(_ entity: Int) -> [RowKey] { tx.touched(entity) }

    // MARK: Row-local derived attributes (copies, string functions, arithmetic, now())

    func recompute(_ e: EntityDescription, _ d: ResolvedDerivedAttribute) throws {
        if d.parsed == .now { return try stamp(e, d) }
        var candidates = Set<RowKey>()
        let paths = d.parsed.paths
        for key in touched(e.index) {
            tx.rowsExamined += 1
            // Touched rows are all in the transaction's states: one lookup each.
            guard let state = tx.rowStates[key], let current = state.current else { continue }
            guard let settled = state.settled else { candidates.insert(key); continue }
            for path in paths where !settled[e.fieldIndex[path[0]]!].isIdentical(to: current[e.fieldIndex[path[0]]!]) {
                candidates.insert(key)
                break
            }
        }
        for path in paths where path.count > 1 { try fanOut(e, path, into: &candidates) }
        for key in candidates.sorted(by: { $0.pk < $1.pk }) {
            guard let r = try tx.row(key) else { continue }
            let v = try DerivedEvaluator(tx: tx, entity: e, property: d.name).value(of: d.parsed, at: key, as: d.type)
            // Byte for byte: a canonically equivalent spelling (equal by `==`) is another value
            // to a prefix search, an index key and the checker.
            if !r[d.field].isIdentical(to: v) { try tx.setFields(key, [(d.field, v)]) }
        }
    }

    /// `now()`: the transaction's timestamp on rows inserted, or whose own stored attributes
    /// or to-one relationships a caller changed, compared with the start of the transaction
    /// (so settling several times gives what one settle at commit gives: a row changed and
    /// changed back keeps its stamp).
    func stamp(_ e: EntityDescription, _ d: ResolvedDerivedAttribute) throws {
        for key in touched(e.index) {
            tx.rowsExamined += 1
            guard let state = tx.rowStates[key], let current = state.current else { continue }
            let v: StoredValue
            if let original = state.original {
                guard state.explicit else { continue }
                let changed = e.fields.indices.contains { i in
                    switch e.fields[i].kind {
                    case .attribute, .toOne: return original[i] != current[i]
                    default: return false
                    }
                }
                v = changed ? .date(timestamp) : original[d.field]
            } else {
                v = .date(timestamp)
            }
            if current[d.field] != v { try tx.setFields(key, [(d.field, v)]) }
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
                tx.rowsExamined += 1
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

}
