import Foundation
import StrataStorage

extension DerivationEngine {
    /// `@count`/`@sum`/`@avg`/`@min`/`@max` over a to-many whose inverse is a to-one, for
    /// every member at once (the aggregates of one relationship that follow each other in
    /// dependency order): each touched child moves its contribution from its old parent and
    /// value to its new ones, and each parent is written once.
    func aggregateToMany(_ entity: EntityDescription, _ members: [AggregateMember],
                         _ rel: ResolvedRelationship) throws {
        let childEntity = model.entities[rel.targetIndex]
        let fk = rel.inverseField!
        // What the loop reads per member, out of the members: a member is not copied per child.
        let sources = members.map(\.source)
        let extremes = members.map { $0.function == .min || $0.function == .max }
        var deltas = ParentDeltas(width: members.count)
        for key in touched(childEntity.index) {
            tx.rowsExamined += 1
            guard let state = tx.rowStates[key] else { continue }
            let before = state.settled, after = state.current
            let oldParent = parent(before?[fk]), newParent = parent(after?[fk])
            for i in sources.indices {
                let oldValue = sources[i].map { before?[$0] ?? .null } ?? .null
                let newValue = sources[i].map { after?[$0] ?? .null } ?? .null
                if oldParent == newParent && oldValue.isIdentical(to: newValue) { continue }
                if let oldParent { deltas.leave(oldValue, parent: oldParent, member: i) }
                if let newParent { deltas.enter(newValue, parent: newParent, member: i) }
                if extremes[i] {
                    try moveExtreme(entity, members[i].derived, child: key.pk, from: (oldParent, oldValue),
                                    to: (newParent, newValue))
                }
            }
        }
        // Sums a change by predicate moved from the rows' bytes (``RowRewrite``), applied with
        // the rest.
        if !tx.rewrittenSums.isEmpty {
            for (i, member) in members.enumerated() {
                let key = RewrittenSumKey(entity: entity.index, field: member.derived.field)
                if let moved = tx.rewrittenSums.removeValue(forKey: key) { deltas.merge(moved, into: i) }
            }
        }
        try apply(deltas, entity, members, childEntity: childEntity)
    }

    /// The same over a many-to-many: a touched child (a value changed, or links made or
    /// broken) leaves the parents it had and enters the parents it has.
    func aggregateManyToMany(_ entity: EntityDescription, _ derived: ResolvedDerivedAttribute,
                             _ function: AggregateFunction,
                             _ rel: ResolvedRelationship, _ source: Int?) throws {
        let childEntity = model.entities[rel.targetIndex]
        var children = Set(touched(childEntity.index).map(\.pk))
        var changesOf: [UInt64: [RecordTransaction.LinkChange]] = [:]
        for change in tx.pendingLinkChanges
            where change.entity == childEntity.index && change.relationship == rel.inverse {
            children.insert(change.row)
            changesOf[change.row, default: []].append(change)
        }
        var deltas = ParentDeltas(width: 1)
        for child in children.sorted() {
            tx.rowsExamined += 1
            let key = RowKey(entity: childEntity.index, pk: child)
            let settled: [StoredValue]?? = tx.settled(key)
            let current = try tx.row(key)
            let before = settled == nil ? current : settled!  // untouched row: same values before and after
            let oldValue = source.map { before?[$0] ?? .null } ?? .null
            let newValue = source.map { current?[$0] ?? .null } ?? .null
            var now = Set(current == nil ? [] : try tx.source.keys(RecordTrees.join(childEntity, rel.inverse),
                                                                   prefix: KeyEncoding.primaryKey(child)))
            let after = now
            for change in (changesOf[child] ?? []).reversed() {
                if change.added { now.remove(change.other) } else { now.insert(change.other) }
            }
            let was = before == nil ? [] : now
            let same = oldValue.isIdentical(to: newValue)
            if same && was == after { continue }
            for parentKey in was where !same || !after.contains(parentKey) {
                deltas.leave(oldValue, parent: parentKey, member: 0)
            }
            for parentKey in after where !same || !was.contains(parentKey) {
                deltas.enter(newValue, parent: parentKey, member: 0)
            }
            if function == .min || function == .max {
                for parentKey in was {
                    try moveExtreme(entity, derived, child: child, from: (parentKey, oldValue), to: (nil, .null))
                }
                for parentKey in after {
                    try moveExtreme(entity, derived, child: child, from: (nil, .null), to: (parentKey, newValue))
                }
            }
        }
        let member = AggregateMember(derived: derived, function: function, source: source)
        try apply(deltas, entity, [member], childEntity: childEntity)
    }

    func parent(_ value: StoredValue?) -> UInt64? {
        if case .int(let raw)? = value { return UInt64(bitPattern: raw) }
        return nil
    }

    /// Keeps the `@min`/`@max` tree (parent, child value, child) in step with one child.
    func moveExtreme(_ entity: EntityDescription, _ derived: ResolvedDerivedAttribute, child: UInt64,
                     from old: (UInt64?, StoredValue), to new: (UInt64?, StoredValue)) throws {
        let tree = try tx.tx.treeCreatingIfMissing(RecordTrees.extremes(entity, derived.name))
        if let parentKey = old.0, !old.1.isNull {
            _ = try tree.delete(RecordTrees.extremesKey(parent: parentKey, value: old.1, child: child))
        }
        if let parentKey = new.0, !new.1.isNull {
            try tree.put(RecordTrees.extremesKey(parent: parentKey, value: new.1, child: child), [])
        }
    }

    /// Applies each parent's deltas (one per member) to its stored values and bookkeeping
    /// fields. The row is only read here; the fields that change are set in place, once.
    func apply(_ deltas: ParentDeltas, _ entity: EntityDescription, _ members: [AggregateMember],
               childEntity: EntityDescription) throws {
        var changes: [(field: Int, value: StoredValue)] = []
        for (pk, first) in deltas.parentsInKeyOrder() {
            let key = RowKey(entity: entity.index, pk: pk)
            guard let row = try tx.row(key) else { continue }  // the parent is gone
            changes.removeAll(keepingCapacity: true)
            for i in members.indices {
                try applyDelta(deltas.deltas[first + i], members[i], entity, parent: pk, row: row,
                               childEntity: childEntity, into: &changes)
            }
            if !changes.isEmpty { try tx.setFields(key, changes) }
        }
    }

    /// The fields one member's delta changes in a parent row `row`, by ``AggregateArithmetic``.
    private func applyDelta(_ delta: AggregateDelta, _ member: AggregateMember, _ entity: EntityDescription,
                            parent pk: UInt64, row: [StoredValue], childEntity: EntityDescription,
                            into changes: inout [(field: Int, value: StoredValue)]) throws {
        let derived = member.derived, source = member.source
        func set(_ field: Int, _ value: StoredValue) {
            if !row[field].isIdentical(to: value) { changes.append((field, value)) }
        }
        do {
            switch member.function {
            case .count:
                if delta.count == 0 { return }
                let current = try AggregateArithmetic.countValue(row[derived.field])
                let count = try AggregateArithmetic.add(current, delta.count)
                set(derived.field, try DerivedValues.convert(.int(count), to: derived.type))
            case .sum:
                if delta.added.isEmpty && delta.removed.isEmpty { return }
                let kind = AggregateArithmetic.SumKind(childEntity.fields[source!].type)
                let aux = derived.auxiliaryFields
                // The running sum lives in the attribute itself, or in its first auxiliary
                // field when the attribute's kind differs from the values' (FORMAT.md §12).
                let running = aux.first ?? derived.field
                let total = try movedSum(kind, row, running, compensation: kind == .double ? aux[1] : nil, delta, set)
                if running != derived.field { set(derived.field, try DerivedValues.convert(total, to: derived.type)) }
            case .avg:
                if delta.added.isEmpty && delta.removed.isEmpty { return }
                let kind = AggregateArithmetic.SumKind(childEntity.fields[source!].type)
                let aux = derived.auxiliaryFields
                let sumField = aux[0], countField = aux[1]
                let count = try AggregateArithmetic.add(try AggregateArithmetic.integer(row[countField]),
                                                        Int64(delta.added.count) - Int64(delta.removed.count))
                set(countField, .int(count))
                let total = try movedSum(kind, row, sumField, compensation: kind == .double ? aux[2] : nil, delta, set)
                set(derived.field, try AggregateArithmetic.mean(sum: total, count: count, as: derived.type))
            case .min, .max:
                if delta.added.isEmpty && delta.removed.isEmpty { return }
                let moved = try movedExtreme(row[derived.field], delta, entity, derived, parent: pk,
                                             max: member.function == .max, source: source!, childEntity: childEntity)
                set(derived.field, moved)
            }
        } catch let overflow as AggregateArithmetic.Overflow {
            throw StrataError.validation(entity: entity.name, property: derived.name,
                                         reason: "\(overflow.reason) in \(derived.expression)")
        }
    }

    /// A running sum moved by a delta: kept in `field` (in the values' kind), with a double
    /// sum's compensation in `compensation`. Returns the total in the values' kind; sets the
    /// fields it changed through `set`.
    private func movedSum(_ kind: AggregateArithmetic.SumKind, _ row: [StoredValue], _ field: Int, compensation: Int?,
                          _ delta: AggregateDelta,
                          _ set: (Int, StoredValue) -> Void) throws -> StoredValue {
        let total: StoredValue
        switch kind {
        case .integer:
            // Summed in 128 bits: the total overflows only when it leaves the 64-bit range, in
            // whatever order the values entered and left (a change by predicate's come last).
            var sum = Int128(try AggregateArithmetic.integer(row[field]))
            for value in delta.added { sum += Int128(try AggregateArithmetic.integer(value)) }
            for value in delta.removed { sum -= Int128(try AggregateArithmetic.integer(value)) }
            guard let narrow = Int64(exactly: sum) else {
                throw AggregateArithmetic.Overflow(reason: "the integer sum leaves the 64-bit range")
            }
            total = .int(narrow)
        case .decimal:
            guard case .decimal(let start) = row[field] else {
                throw StrataError.corrupt("a running decimal sum is not a decimal", offset: nil)
            }
            var sum = AggregateArithmetic.DecimalSum(start)
            for value in delta.added { sum.add(try AggregateArithmetic.decimal(value)) }
            for value in delta.removed { sum.add(try AggregateArithmetic.decimal(value), subtracting: true) }
            total = .decimal(try sum.total())
        case .double:
            var sum = AggregateArithmetic.CompensatedSum(sum: try AggregateArithmetic.double(row[field]),
                                                       compensation: try AggregateArithmetic.double(row[compensation!]))
            for value in delta.added { sum.add(try AggregateArithmetic.double(value)) }
            for value in delta.removed { sum.add(-(try AggregateArithmetic.double(value))) }
            set(compensation!, .double(sum.compensation))
            set(field, .double(sum.sum))
            return .double(try sum.total())
        }
        set(field, total)
        return total
    }

    /// A parent's `@min`/`@max` after `delta`: values that entered can only improve on the
    /// current extreme, so the extremes tree is consulted only when a value equal to the
    /// current extreme left (the one seek that replaces a rescan).
    func movedExtreme(_ current: StoredValue, _ delta: AggregateDelta, _ entity: EntityDescription,
                      _ derived: ResolvedDerivedAttribute,
                      parent: UInt64, max: Bool, source: Int, childEntity: EntityDescription) throws -> StoredValue {
        var extremeLeft = current.isNull && !delta.removed.isEmpty
        for value in delta.removed where !extremeLeft {
            extremeLeft = StoredValue.compare(try DerivedValues.convert(value, to: derived.type), current) == 0
        }
        if extremeLeft {
            return try extreme(entity, derived, parent: parent, max: max, source: source, childEntity: childEntity)
        }
        var best = current
        for value in delta.added {
            let converted = try DerivedValues.convert(value, to: derived.type)
            let order = StoredValue.compare(converted, best) ?? 0
            if best.isNull || (max ? order > 0 : order < 0) { best = converted }
        }
        return best
    }

    /// The smallest or largest child value of `parent`, from the extremes tree.
    func extreme(_ entity: EntityDescription, _ derived: ResolvedDerivedAttribute, parent: UInt64, max: Bool,
                 source: Int,
                 childEntity: EntityDescription) throws -> StoredValue {
        guard let cursor = try tx.source.cursor(RecordTrees.extremes(entity, derived.name)) else { return .null }
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
        let tree = RecordTrees.extremes(entity, derived.name)
        let child = try RecordTrees.trailingPrimaryKey(cursor.key, minimumLength: 17, tree: tree)
        guard let row = try tx.row(RowKey(entity: childEntity.index, pk: child)) else { return .null }
        return try DerivedValues.convert(row[source], to: derived.type)
    }
}

/// One aggregate derived attribute: what it computes, and over which child field.
struct AggregateMember {
    let derived: ResolvedDerivedAttribute
    let function: AggregateFunction
    /// The child's field (nil for `@count`).
    let source: Int?
}

/// What entered and left one parent's relationship in this transaction.
struct AggregateDelta {
    var count: Int64 = 0
    /// Values that entered (+) and left (−), non-nil ones only.
    var added: [StoredValue] = []
    var removed: [StoredValue] = []
}

/// The deltas of every parent a settle moved, `width` members each, side by side in one array:
/// a parent costs an entry in a table, not an array of its own.
struct ParentDeltas {
    let width: Int
    /// Each parent's first delta in ``deltas``.
    private var firsts: [UInt64: Int] = [:]
    private(set) var deltas: [AggregateDelta] = []

    init(width: Int) { self.width = width }

    /// Whether no parent moved.
    var isEmpty: Bool { firsts.isEmpty }

    mutating func enter(_ value: StoredValue, parent: UInt64, member: Int) {
        deltas[first(of: parent) + member].enter(value)
    }

    mutating func leave(_ value: StoredValue, parent: UInt64, member: Int) {
        deltas[first(of: parent) + member].leave(value)
    }

    /// A child of `parent` whose value went from `old` to `new`: ``leave(_:parent:member:)``
    /// then ``enter(_:parent:member:)``, the parent looked up once.
    mutating func move(_ old: StoredValue, to new: StoredValue, parent: UInt64, member: Int) {
        let at = first(of: parent) + member
        deltas[at].leave(old)
        deltas[at].enter(new)
    }

    /// The parents with their first delta, in key order (parents are rewritten in that order).
    func parentsInKeyOrder() -> [(parent: UInt64, first: Int)] {
        firsts.map { (parent: $0.key, first: $0.value) }.sorted { $0.parent < $1.parent }
    }

    /// Adds the deltas of `other` (one member wide) to member `member` of each of its parents.
    mutating func merge(_ other: ParentDeltas, into member: Int) {
        for (parent, first) in other.firsts {
            let moved = other.deltas[first]
            let at = self.first(of: parent) + member
            deltas[at].count += moved.count
            deltas[at].added += moved.added
            deltas[at].removed += moved.removed
        }
    }

    private mutating func first(of parent: UInt64) -> Int {
        if let first = firsts[parent] { return first }
        let first = deltas.count
        firsts[parent] = first
        deltas.append(contentsOf: repeatElement(AggregateDelta(), count: width))
        return first
    }
}

extension AggregateDelta {
    mutating func enter(_ value: StoredValue) {
        count += 1
        if !value.isNull { added.append(value) }
    }

    mutating func leave(_ value: StoredValue) {
        count -= 1
        if !value.isNull { removed.append(value) }
    }
}

/// An `@sum` a change by predicate moved (``RowRewrite``): its parent entity and derived field.
struct RewrittenSumKey: Hashable {
    let entity: Int
    let field: Int
}
