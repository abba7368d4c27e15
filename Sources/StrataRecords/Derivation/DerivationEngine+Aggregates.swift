import Foundation
import StrataStorage

extension DerivationEngine {
    /// `@count`/`@sum`/`@avg`/`@min`/`@max` over a to-many whose inverse is a to-one, for
    /// every member at once (the aggregates of one relationship that follow each other in
    /// dependency order): each touched child moves its contribution from its old parent and
    /// value to its new ones, and each parent is written once.
    func aggregateToMany(_ e: EntityDescription, _ members: [AggregateMember], _ rel: ResolvedRelationship) throws {
        let c = model.entities[rel.targetIndex]
        let fk = rel.inverseField!
        let empty = [AggregateDelta](repeating: AggregateDelta(), count: members.count)
        var deltas: [UInt64: [AggregateDelta]] = [:]
        for key in touched(c.index) {
            tx.rowsExamined += 1
            guard let state = tx.rowStates[key] else { continue }
            let o = state.settled, n = state.current
            let po = parent(o?[fk]), pn = parent(n?[fk])
            for (m, member) in members.enumerated() {
                let vo = member.source.map { o?[$0] ?? .null } ?? .null
                let vn = member.source.map { n?[$0] ?? .null } ?? .null
                if po == pn && vo.isIdentical(to: vn) { continue }
                if let po { deltas[po, default: empty][m].leave(vo) }
                if let pn { deltas[pn, default: empty][m].enter(vn) }
                if member.function == .min || member.function == .max {
                    try moveExtreme(e, member.derived, child: key.pk, from: (po, vo), to: (pn, vn))
                }
            }
        }
        try apply(deltas, e, members, childEntity: c)
    }

    /// The same over a many-to-many: a touched child (a value changed, or links made or
    /// broken) leaves the parents it had and enters the parents it has.
    func aggregateManyToMany(_ e: EntityDescription, _ d: ResolvedDerivedAttribute, _ f: AggregateFunction,
                             _ rel: ResolvedRelationship, _ source: Int?) throws {
        let c = model.entities[rel.targetIndex]
        var children = Set(touched(c.index).map(\.pk))
        var changesOf: [UInt64: [RecordTransaction.LinkChange]] = [:]
        for change in tx.pendingLinkChanges where change.entity == c.index && change.relationship == rel.inverse {
            children.insert(change.row)
            changesOf[change.row, default: []].append(change)
        }
        var deltas: [UInt64: [AggregateDelta]] = [:]
        for child in children.sorted() {
            tx.rowsExamined += 1
            let key = RowKey(entity: c.index, pk: child)
            let o: [StoredValue]?? = tx.settled(key)
            let n = try tx.row(key)
            let before = o == nil ? n : o!  // untouched row: same values before and after
            let vo = source.map { before?[$0] ?? .null } ?? .null
            let vn = source.map { n?[$0] ?? .null } ?? .null
            var now = Set(n == nil ? [] : try tx.source.keys(RecordTrees.join(c, rel.inverse), prefix: KeyEncoding.primaryKey(child)))
            let after = now
            for change in (changesOf[child] ?? []).reversed() {
                if change.added { now.remove(change.other) } else { now.insert(change.other) }
            }
            let was = before == nil ? [] : now
            let same = vo.isIdentical(to: vn)
            if same && was == after { continue }
            for p in was where !same || !after.contains(p) { deltas[p, default: [AggregateDelta()]][0].leave(vo) }
            for p in after where !same || !was.contains(p) { deltas[p, default: [AggregateDelta()]][0].enter(vn) }
            if f == .min || f == .max {
                for p in was { try moveExtreme(e, d, child: child, from: (p, vo), to: (nil, .null)) }
                for p in after { try moveExtreme(e, d, child: child, from: (nil, .null), to: (p, vn)) }
            }
        }
        try apply(deltas, e, [AggregateMember(derived: d, function: f, source: source)], childEntity: c)
    }

    func parent(_ v: StoredValue?) -> UInt64? {
        if case .int(let p)? = v { return UInt64(bitPattern: p) }
        return nil
    }

    /// Keeps the `@min`/`@max` tree (parent, child value, child) in step with one child.
    func moveExtreme(_ e: EntityDescription, _ d: ResolvedDerivedAttribute, child: UInt64,
                     from old: (UInt64?, StoredValue), to new: (UInt64?, StoredValue)) throws {
        let t = try tx.tx.tree(RecordTrees.extremes(e, d.name), createIfMissing: true)!
        if let p = old.0, !old.1.isNull { _ = try t.delete(RecordTrees.extremesKey(parent: p, value: old.1, child: child)) }
        if let p = new.0, !new.1.isNull { try t.put(RecordTrees.extremesKey(parent: p, value: new.1, child: child), []) }
    }

    /// Applies each parent's deltas (one per member) to its stored values and bookkeeping
    /// fields. The row is only read here; the fields that change are set in place, once.
    func apply(_ deltas: [UInt64: [AggregateDelta]], _ e: EntityDescription, _ members: [AggregateMember],
               childEntity c: EntityDescription) throws {
        var changes: [(field: Int, value: StoredValue)] = []
        for (pk, memberDeltas) in deltas.sorted(by: { $0.key < $1.key }) {
            let key = RowKey(entity: e.index, pk: pk)
            guard let r = try tx.row(key) else { continue }  // the parent is gone
            changes.removeAll(keepingCapacity: true)
            for (m, member) in members.enumerated() {
                try applyDelta(memberDeltas[m], member, e, parent: pk, row: r, childEntity: c, into: &changes)
            }
            if !changes.isEmpty { try tx.setFields(key, changes) }
        }
    }

    /// The fields one member's delta changes in a parent row `r`, by ``AggregateArithmetic``.
    private func applyDelta(_ delta: AggregateDelta, _ member: AggregateMember, _ e: EntityDescription, parent pk: UInt64,
                            row r: [StoredValue], childEntity c: EntityDescription, into changes: inout [(field: Int, value: StoredValue)]) throws {
        let d = member.derived, source = member.source
        func set(_ field: Int, _ v: StoredValue) { if !r[field].isIdentical(to: v) { changes.append((field, v)) } }
        do {
            switch member.function {
            case .count:
                if delta.count == 0 { return }
                let current = try AggregateArithmetic.countValue(r[d.field])
                set(d.field, try DerivedValues.convert(.int(try AggregateArithmetic.add(current, delta.count)), to: d.type))
            case .sum:
                if delta.added.isEmpty && delta.removed.isEmpty { return }
                let kind = AggregateArithmetic.SumKind(c.fields[source!].type)
                let aux = d.auxiliaryFields
                // The running sum lives in the attribute itself, or in its first auxiliary
                // field when the attribute's kind differs from the values' (FORMAT.md §12).
                let running = aux.first ?? d.field
                let total = try movedSum(kind, r, running, compensation: kind == .double ? aux[1] : nil, delta, set)
                if running != d.field { set(d.field, try DerivedValues.convert(total, to: d.type)) }
            case .avg:
                if delta.added.isEmpty && delta.removed.isEmpty { return }
                let kind = AggregateArithmetic.SumKind(c.fields[source!].type)
                let aux = d.auxiliaryFields
                let sumField = aux[0], countField = aux[1]
                let count = try AggregateArithmetic.add(try AggregateArithmetic.integer(r[countField]),
                                                        Int64(delta.added.count) - Int64(delta.removed.count))
                set(countField, .int(count))
                let total = try movedSum(kind, r, sumField, compensation: kind == .double ? aux[2] : nil, delta, set)
                set(d.field, try AggregateArithmetic.mean(sum: total, count: count, as: d.type))
            case .min, .max:
                if delta.added.isEmpty && delta.removed.isEmpty { return }
                set(d.field, try movedExtreme(r[d.field], delta, e, d, parent: pk, max: member.function == .max, source: source!, childEntity: c))
            }
        } catch let overflow as AggregateArithmetic.Overflow {
            throw StrataError.validation(entity: e.name, property: d.name, reason: "\(overflow.reason) in \(d.expression)")
        }
    }

    /// A running sum moved by a delta: kept in `field` (in the values' kind), with a double
    /// sum's compensation in `compensation`. Returns the total in the values' kind; sets the
    /// fields it changed through `set`.
    private func movedSum(_ kind: AggregateArithmetic.SumKind, _ r: [StoredValue], _ field: Int, compensation: Int?, _ delta: AggregateDelta,
                          _ set: (Int, StoredValue) -> Void) throws -> StoredValue {
        let total: StoredValue
        switch kind {
        case .integer:
            var s = try AggregateArithmetic.integer(r[field])
            for v in delta.added { s = try AggregateArithmetic.add(s, try AggregateArithmetic.integer(v)) }
            for v in delta.removed { s = try AggregateArithmetic.subtract(s, try AggregateArithmetic.integer(v)) }
            total = .int(s)
        case .decimal:
            guard case .decimal(let start) = r[field] else { throw StrataError.corrupt("a running decimal sum is not a decimal", offset: nil) }
            var s = AggregateArithmetic.DecimalSum(start)
            for v in delta.added { s.add(try AggregateArithmetic.decimal(v)) }
            for v in delta.removed { s.add(try AggregateArithmetic.decimal(v), subtracting: true) }
            total = .decimal(try s.total())
        case .double:
            var s = AggregateArithmetic.CompensatedSum(sum: try AggregateArithmetic.double(r[field]),
                                                       compensation: try AggregateArithmetic.double(r[compensation!]))
            for v in delta.added { s.add(try AggregateArithmetic.double(v)) }
            for v in delta.removed { s.add(-(try AggregateArithmetic.double(v))) }
            set(compensation!, .double(s.compensation))
            set(field, .double(s.sum))
            return .double(try s.total())
        }
        set(field, total)
        return total
    }

    /// A parent's `@min`/`@max` after `delta`: values that entered can only improve on the
    /// current extreme, so the extremes tree is consulted only when a value equal to the
    /// current extreme left (the one seek that replaces a rescan).
    func movedExtreme(_ current: StoredValue, _ delta: AggregateDelta, _ e: EntityDescription, _ d: ResolvedDerivedAttribute,
                      parent: UInt64, max: Bool, source: Int, childEntity c: EntityDescription) throws -> StoredValue {
        var extremeLeft = current.isNull && !delta.removed.isEmpty
        for v in delta.removed where !extremeLeft {
            extremeLeft = StoredValue.compare(try DerivedValues.convert(v, to: d.type), current) == 0
        }
        if extremeLeft { return try extreme(e, d, parent: parent, max: max, source: source, childEntity: c) }
        var best = current
        for v in delta.added {
            let x = try DerivedValues.convert(v, to: d.type)
            let order = StoredValue.compare(x, best) ?? 0
            if best.isNull || (max ? order > 0 : order < 0) { best = x }
        }
        return best
    }

    /// The smallest or largest child value of `parent`, from the extremes tree.
    func extreme(_ e: EntityDescription, _ d: ResolvedDerivedAttribute, parent: UInt64, max: Bool, source: Int,
                 childEntity c: EntityDescription) throws -> StoredValue {
        guard let cursor = try tx.source.cursor(RecordTrees.extremes(e, d.name)) else { return .null }
        let prefix = KeyEncoding.primaryKey(parent)
        let found: Bool
        if max {
            found = parent == .max ? try cursor.last() : try cursor.seekBackward(KeyEncoding.primaryKey(parent + 1))
            // seekBackward lands on the last key ≤ its argument; the next parent's first key
            // would be > prefix(parent + 1), so anything found here is ≤ our range's end.
        } else {
            found = try cursor.seek(prefix)
        }
        guard found, cursor.key.starts(with: prefix) else { return .null }
        // (parent, value key of at least one byte, child): anything shorter is damage.
        let child = try RecordTrees.trailingPrimaryKey(cursor.key, minimumLength: 17, tree: RecordTrees.extremes(e, d.name))
        guard let row = try tx.row(RowKey(entity: c.index, pk: child)) else { return .null }
        return try DerivedValues.convert(row[source], to: d.type)
    }
}
