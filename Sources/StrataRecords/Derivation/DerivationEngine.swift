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
            let entity = model.entities[order[i].entity]
            let derived = entity.derivedAttributes[order[i].derived]
            i += 1
            guard case .aggregate(let function, let relName, let attr) = derived.parsed else {
                try recompute(entity, derived)
                continue
            }
            let rel = entity.relationship(relName)!
            let source = attr.map { model.entities[rel.targetIndex].fieldIndex[$0]! }
            if rel.isManyToMany {
                try aggregateManyToMany(entity, derived, function, rel, source)
                continue
            }
            // The aggregates over the same to-many that come next in dependency order depend
            // on nothing computed in between: one pass over the children serves them all.
            // Except over a to-many of the entity itself (a tree): an aggregate of the group's
            // own result (`children.low.@max` after `children.value.@min`) needs that result
            // settled on the children first, so it starts a pass of its own.
            var members = [AggregateMember(derived: derived, function: function, source: source)]
            while i < order.count, order[i].entity == entity.index {
                let next = entity.derivedAttributes[order[i].derived]
                guard case .aggregate(let nextFunction, let name, let nextAttribute) = next.parsed,
                      name == relName else { break }
                let nextSource = nextAttribute.map { model.entities[rel.targetIndex].fieldIndex[$0]! }
                if rel.targetIndex == entity.index, let nextSource,
                   members.contains(where: { $0.derived.field == nextSource }) { break }
                members.append(AggregateMember(derived: next, function: nextFunction, source: nextSource))
                i += 1
            }
            try aggregateToMany(entity, members, rel)
        }
    }

    // MARK: Change set

    /// Whether field `field` of the touched row `key` differs from its value at the last settle.
    func changed(_ key: RowKey, _ field: Int) throws -> Bool {
        guard let settled = tx.settled(key) else { return false }
        guard let before = settled, let after = try tx.row(key) else { return true }
        return !before[field].isIdentical(to: after[field])
    }

    func touched(_ entity: Int) -> [RowKey] { tx.touched(entity) }

    // MARK: Row-local derived attributes (copies, string functions, arithmetic, now())

    func recompute(_ entity: EntityDescription, _ derived: ResolvedDerivedAttribute) throws {
        if derived.parsed == .now { return try stamp(entity, derived) }
        var candidates = Set<RowKey>()
        let paths = derived.parsed.paths
        // The field each path starts from, looked up by name once (not twice per row).
        let watched = paths.map { entity.fieldIndex[$0[0]]! }
        for key in touched(entity.index) {
            tx.rowsExamined += 1
            // Touched rows are all in the transaction's states: one lookup each.
            guard let state = tx.rowStates[key], let current = state.current else { continue }
            guard let settled = state.settled else { candidates.insert(key); continue }
            for field in watched where !settled[field].isIdentical(to: current[field]) {
                candidates.insert(key)
                break
            }
        }
        if let hop = Self.singleHop(paths) {
            try recomputeThroughHop(entity, derived, hop, skipping: candidates)
        } else {
            for path in paths where path.count > 1 { try fanOut(entity, path, into: &candidates) }
        }
        for key in candidates.sorted(by: { $0.pk < $1.pk }) {
            guard let row = try tx.row(key) else { continue }
            let evaluator = DerivedEvaluator(tx: tx, entity: entity, property: derived.name)
            let value = try evaluator.value(of: derived.parsed, at: key, as: derived.type)
            // Byte for byte: a canonically equivalent spelling (equal by `==`) is another value
            // to a prefix search, an index key and the checker.
            if !row[derived.field].isIdentical(to: value) { try tx.setField(key, derived.field, value) }
        }
    }

    /// `now()`: the transaction's timestamp on rows inserted, or whose own stored attributes
    /// or to-one relationships a caller changed, compared with the start of the transaction
    /// (so settling several times gives what one settle at commit gives: a row changed and
    /// changed back keeps its stamp).
    func stamp(_ entity: EntityDescription, _ derived: ResolvedDerivedAttribute) throws {
        for key in touched(entity.index) {
            tx.rowsExamined += 1
            guard let state = tx.rowStates[key], let current = state.current else { continue }
            let value: StoredValue
            if let original = state.original {
                guard state.explicit else { continue }
                let changed = entity.fields.indices.contains { i in
                    switch entity.fields[i].kind {
                    case .attribute, .toOne: return original[i] != current[i]
                    default: return false
                    }
                }
                value = changed ? .date(timestamp) : original[derived.field]
            } else {
                value = .date(timestamp)
            }
            if current[derived.field] != value { try tx.setField(key, derived.field, value) }
        }
    }

    /// The one path `[relationship, attribute]` that every path of an expression is, if it is
    /// one: the expression then reads nothing but the attribute of the object its row's to-one
    /// reaches (`list.name`, `canonical:(list.name)`), so every row reaching one object takes
    /// one value.
    static func singleHop(_ paths: [[String]]) -> [String]? {
        guard let first = paths.first, first.count == 2, paths.allSatisfy({ $0 == first }) else { return nil }
        return first
    }

    /// The fan-out of an expression over one to-one hop (``singleHop(_:)``): for each object of
    /// the target entity whose attribute changed, the rows that reach it (its inverse entries, in
    /// key order) take the value computed once, for the first of them, instead of once per row
    /// through a set and a sort. Rows in `skipping` (their own relationship or source changed)
    /// are left to the caller, which computes each of them.
    func recomputeThroughHop(_ entity: EntityDescription, _ derived: ResolvedDerivedAttribute, _ hop: [String],
                             skipping own: Set<RowKey>) throws {
        let relationship = entity.relationship(hop[0])!
        let target = model.entities[relationship.targetIndex]
        let watched = target.fieldIndex[hop[1]]!
        let inverse = RecordTrees.inverse(entity, entity.fieldIndex[hop[0]]!)
        let evaluator = DerivedEvaluator(tx: tx, entity: entity, property: derived.name)
        for targetKey in touched(target.index) where try tx.row(targetKey) != nil && changed(targetKey, watched) {
            tx.rowsExamined += 1
            var value: StoredValue?
            for pk in try tx.source.keys(inverse, prefix: KeyEncoding.primaryKey(targetKey.pk)) {
                let key = RowKey(entity: entity.index, pk: pk)
                if !own.isEmpty && own.contains(key) { continue }
                guard let row = try tx.row(key) else { continue }
                let shared = try value ?? evaluator.value(of: derived.parsed, at: key, as: derived.type)
                value = shared
                if !row[derived.field].isIdentical(to: shared) { try tx.setField(key, derived.field, shared) }
            }
        }
    }

    /// Adds to `candidates` the rows of `entity` whose `path` (to-one hops, then an attribute)
    /// reaches a row whose watched field changed: the attribute at the end, or a hop on the way.
    func fanOut(_ entity: EntityDescription, _ path: [String], into candidates: inout Set<RowKey>) throws {
        var entities = [entity.index]
        for hop in path.dropLast() { entities.append(model.entities[entities.last!].relationship(hop)!.targetIndex) }
        for level in 1..<path.count {
            let target = model.entities[entities[level]]
            let watched = target.fieldIndex[path[level]]!
            for key in touched(target.index) where try tx.row(key) != nil && changed(key, watched) {
                tx.rowsExamined += 1
                var frontier = [key.pk]
                for depth in stride(from: level - 1, through: 0, by: -1) {
                    let owner = model.entities[entities[depth]]
                    let fk = owner.fieldIndex[path[depth]]!
                    var next: [UInt64] = []
                    for pk in frontier {
                        next += try tx.source.keys(RecordTrees.inverse(owner, fk), prefix: KeyEncoding.primaryKey(pk))
                    }
                    frontier = next
                }
                for pk in frontier { candidates.insert(RowKey(entity: entity.index, pk: pk)) }
            }
        }
    }

}
