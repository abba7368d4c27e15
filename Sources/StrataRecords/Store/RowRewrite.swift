import Foundation

/// How ``RecordTransaction/updateAll(_:set:)`` changes a matched row from the bytes its scan
/// read, and ``RecordTransaction/deleteAll(_:)`` deletes one, when nothing but the row itself and
/// running counts and sums over it read what changes. An update: the
/// new row is the old one's bytes with the set values written in (no ``StoredValue`` per field,
/// no row state in the transaction), put into its rows tree at once; an `@sum` over a set field
/// moves by the old value read from the bytes and the new one, at the next settle with the
/// deltas of the rows the transaction changed otherwise. SQLite's UPDATE changes a row
/// where its scan found it in the same spirit; the general path decodes the row, keeps its
/// states, settles and encodes it again (decision 104). A delete takes the row's index and
/// inverse entries out (their keys made from the bytes), moves the counts and sums over it the
/// same way, and deletes it from its tree.
///
/// The plan exists only for a change the general path would make the same way (``init(_:setting:to:model:)``
/// says which), and a row goes the general way whenever the plan cannot tell it makes the
/// same change: a row the transaction already holds a state for, one whose other values fail
/// a check the commit would make, bytes the quick walk does not take. What the general path
/// would throw at commit it still throws there.
struct RowRewrite {
    /// One `@sum` of a set field (an update), or a `@count` or `@sum` (a delete), over the
    /// changed entity's to-one, with what the rows changed so far moved it by, per parent
    /// (values that left and entered, as the derivation engine records a changed row's).
    struct Sum {
        /// The parent entity's index, and its derived field.
        let parent: Int
        let field: Int
        /// The changed entity's field holding the parent's primary key.
        let foreignKey: Int
        /// The field summed (nil: a count).
        let source: Int?
        var deltas = ParentDeltas(width: 1)
    }

    let entity: EntityDescription
    /// By field: whether the change sets it.
    private let sets: [Bool]
    /// By field: the value set (`.null` where nothing is set).
    private let values: [StoredValue]
    /// The set values as a row holds them, end to end; by field, its bytes' range (empty for
    /// a `nil`).
    private let encoded: [UInt8]
    private let encodedRanges: [Range<Int>]
    /// The commit's checks of the fields not set, made on each row's bytes.
    private let otherChecks: [EntityDescription.FieldCheck]
    var sums: [Sum]

    /// Where each field's value starts and ends in the row being rewritten (start -1: absent).
    private var starts: [Int], ends: [Int]
    /// The new row, reused from row to row.
    private var out: [UInt8] = []
    /// By field: the values of ``readFields`` in the row walked last (the others `.null`); for
    /// a delete, what its index and inverse entries are made of. Reused from row to row.
    private(set) var readValues: [StoredValue] = []
    /// The fields whose values a row's change reads: checked ones, sums' foreign keys and
    /// sources, a delete's entries' fields. A value that does not decode sends the row the
    /// general way (which throws for it).
    private let readFields: [Int]

    /// The plan for setting `fields` of `entity` to `values` (by field), or nil when something
    /// besides the rows and sums over them reads one of those fields: an index, a word index, a
    /// uniqueness constraint or an inverse entry; a derived attribute that copies or computes
    /// from it, or stamps the row (`now()`); an aggregate over it other than an integer or
    /// decimal `@sum` over a one-to-many of another entity. A set value the commit's checks
    /// refuse leaves it to the general path too (which refuses it at commit).
    init?(_ entity: EntityDescription, setting fields: [Int], to values: [StoredValue], model: Model) {
        guard !fields.isEmpty else { return nil }
        var sets = [Bool](repeating: false, count: entity.fields.count)
        for field in fields {
            guard entity.fields[field].kind == .attribute, !entity.fieldHasEntries[field] else { return nil }
            sets[field] = true
        }
        if entity.uniqueFields.contains(where: { $0.contains { sets[$0] } }) { return nil }
        let names = Set(fields.map { entity.fields[$0].name })
        var sums: [Sum] = []
        for owner in model.entities {
            for derived in owner.derivedAttributes {
                switch derived.parsed {
                case .aggregate(let function, let relName, let attribute):
                    guard let rel = owner.relationship(relName), rel.targetIndex == entity.index,
                          let attribute, names.contains(attribute) else { continue }
                    // A sum of integers or decimals moves exactly, in any order; a double's
                    // rounding, an average's count and an extreme's tree are the general path's.
                    let source = entity.fieldIndex[attribute]!
                    let kind = AggregateArithmetic.SumKind(entity.fields[source].type)
                    guard function == .sum, kind != .double, !rel.isManyToMany, let fk = rel.inverseField,
                          owner.index != entity.index else { return nil }
                    sums.append(Sum(parent: owner.index, field: derived.field, foreignKey: fk, source: source))
                default:
                    if Self.reads(derived.parsed, of: owner, entity, names, model: model) { return nil }
                }
            }
        }
        // The set values pass the commit's checks once, for every row.
        for check in entity.fieldChecks where sets[check.field] {
            guard Self.passes(values[check.field], check, entity.fields[check.field]) else { return nil }
        }
        var encoded: [UInt8] = [], ranges: [Range<Int>] = []
        for field in entity.fields.indices {
            let start = encoded.count
            if sets[field] && !values[field].isNull { RowCodec.appendValue(values[field], to: &encoded) }
            ranges.append(start..<encoded.count)
        }
        self.entity = entity
        let checked = entity.fieldChecks.filter { !sets[$0.field] && ($0.integerRange != nil || $0.hasRules) }
        self.readFields = Self.fields(checked.map(\.field), sums)
        self.readValues = [StoredValue](repeating: .null, count: entity.fields.count)
        self.sets = sets
        self.values = values
        self.encoded = encoded
        self.encodedRanges = ranges
        self.otherChecks = entity.fieldChecks.filter { !sets[$0.field] }
        self.sums = sums
        starts = [Int](repeating: -1, count: entity.fields.count)
        ends = starts
    }

    /// The plan for deleting rows of `entity`, or nil when a delete of one does more than take
    /// out its entries and move counts and sums: an entity with a to-many relationship (members
    /// to cascade to, deny, or nullify), a to-one whose rule is not `nullify` or whose inverse
    /// is not a to-many (a one-to-one's other side would be cleared), a uniqueness constraint,
    /// a word index; an aggregate over it other than a `@count` or an integer or decimal `@sum`.
    /// Nothing reaches such a row through a to-one (its inverse would be a relationship of the
    /// entity that this refuses), so no copy reads it.
    init?(deleting entity: EntityDescription, model: Model) {
        for rel in entity.relationships {
            guard !rel.isToMany, rel.deleteRule == .nullify,
                  model.entities[rel.targetIndex].relationship(rel.inverse)?.isToMany == true else { return nil }
        }
        guard entity.uniqueFields.isEmpty, entity.fullTextFields.isEmpty else { return nil }
        var sums: [Sum] = []
        for owner in model.entities {
            for derived in owner.derivedAttributes {
                guard case .aggregate(let function, let relName, let attribute) = derived.parsed else {
                    // The entity's own derived values go with its rows; another's read nothing of
                    // them but through an aggregate.
                    if owner.index != entity.index,
                       Self.reads(derived.parsed, of: owner, entity, Set(entity.fields.map(\.name)), model: model) {
                        return nil
                    }
                    continue
                }
                guard let rel = owner.relationship(relName), rel.targetIndex == entity.index else { continue }
                let source = attribute.map { entity.fieldIndex[$0]! }
                switch function {
                case .count: break
                case .sum:
                    guard let source, AggregateArithmetic.SumKind(entity.fields[source].type) != .double else { return nil }
                default: return nil
                }
                guard !rel.isManyToMany, let fk = rel.inverseField else { return nil }
                sums.append(Sum(parent: owner.index, field: derived.field, foreignKey: fk, source: source))
            }
        }
        self.entity = entity
        self.sets = []
        self.values = []
        self.encoded = []
        self.encodedRanges = []
        self.otherChecks = []
        self.sums = sums
        readFields = Self.fields(Array(entity.indexFields.joined()) + entity.toOneFields.map(\.field), sums)
        readValues = [StoredValue](repeating: .null, count: entity.fields.count)
        starts = [Int](repeating: -1, count: entity.fields.count)
        ends = starts
    }

    /// `fields` and the sums' foreign keys and sources, once each, ascending.
    private static func fields(_ fields: [Int], _ sums: [Sum]) -> [Int] {
        Array(Set(fields + sums.map(\.foreignKey) + sums.compactMap(\.source))).sorted()
    }

    /// Whether `expression`, a derived attribute of `owner`, reads one of the attributes
    /// `names` of `entity` (itself, or through to-one hops), stamps a row of `entity`, or
    /// holds an aggregate this check does not follow.
    private static func reads(_ expression: DerivedExpression, of owner: EntityDescription,
                              _ entity: EntityDescription, _ names: Set<String>, model: Model) -> Bool {
        switch expression {
        case .now: return owner.index == entity.index
        case .aggregate: return true
        case .literal: return false
        case .lowercase(let operand), .uppercase(let operand), .canonical(let operand), .negate(let operand):
            return reads(operand, of: owner, entity, names, model: model)
        case .arithmetic(_, let lhs, let rhs):
            return reads(lhs, of: owner, entity, names, model: model) || reads(rhs, of: owner, entity, names, model: model)
        case .path(let path):
            var at = owner
            for hop in path.dropLast() {
                guard let rel = at.relationship(hop) else { return true }
                at = model.entities[rel.targetIndex]
            }
            return at.index == entity.index && names.contains(path[path.count - 1])
        }
    }

    /// Whether `value` passes `check` as ``RecordTransaction/validate()`` judges it.
    private static func passes(_ value: StoredValue, _ check: EntityDescription.FieldCheck, _ field: Field) -> Bool {
        if value.isNull { return check.isOptional }
        if let range = check.integerRange, case .int(let integer) = value, !range.contains(integer) { return false }
        return !check.hasRules || field.validation.allSatisfy { $0.violation(value) == nil }
    }

    // MARK: One row

    /// The new bytes of the row `stored` (in ``newRow``), its sums' deltas taken; false, nothing
    /// taken, when the row must go the general way. `same` tells a row the change leaves as it
    /// was (no put, no change to report).
    mutating func rewrite(_ stored: UnsafeRawBufferPointer, same: inout Bool) -> Bool {
        let fields = entity.fields
        guard let count = walk(stored), readAll(stored) else { return false }
        for check in otherChecks {
            let i = check.field
            guard starts[i] >= 0 else {
                if check.isOptional { continue }
                return false
            }
            // A present value with a range or rules is among those read.
            if (check.integerRange != nil || check.hasRules) && !Self.passes(readValues[i], check, fields[i]) {
                return false
            }
        }
        // A row whose count is the layout's and whose set fields hold the set bytes already is
        // the new row byte for byte: nothing to put.
        same = count == fields.count
        for i in 0..<fields.count where same && sets[i] {
            let range = encodedRanges[i]
            if starts[i] < 0 {
                same = range.isEmpty
            } else {
                same = ends[i] - starts[i] == range.count
                    && (0..<range.count).allSatisfy { stored[starts[i] + $0] == encoded[range.lowerBound + $0] }
            }
        }
        if same { return true }
        // The new row: every field of the layout, as the general path's encoding writes it.
        out.removeAll(keepingCapacity: true)
        out.append(RowCodec.version)
        RowCodec.appendVarint(&out, UInt64(fields.count))
        var bits: UInt8 = 0
        for i in 0..<fields.count {
            let present = sets[i] ? !encodedRanges[i].isEmpty : starts[i] >= 0
            if present { bits |= 1 << UInt8(i & 7) }
            if i & 7 == 7 {
                out.append(bits)
                bits = 0
            }
        }
        if fields.count & 7 != 0 { out.append(bits) }
        // The values between two set fields lie end to end in the old row: one copy per run.
        var run = 0..<0
        for i in 0..<fields.count {
            if sets[i] {
                if !run.isEmpty { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: stored[run])) }
                run = 0..<0
                out.append(contentsOf: encoded[encodedRanges[i]])
            } else if starts[i] >= 0 {
                run = (run.isEmpty ? starts[i] : run.lowerBound)..<ends[i]
            }
        }
        if !run.isEmpty { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: stored[run])) }
        for s in sums.indices {
            let source = sums[s].source!
            guard case .int(let raw) = readValues[sums[s].foreignKey] else { continue }
            let parent = UInt64(bitPattern: raw)
            let old = readValues[source]
            if old.isIdentical(to: values[source]) { continue }
            sums[s].deltas.move(old, to: values[source], parent: parent, member: 0)
        }
        return true
    }

    /// Reads the row `stored` for its deletion: its entries' values (in ``readValues``); false
    /// when the row must go the general way.
    mutating func readForRemoval(_ stored: UnsafeRawBufferPointer) -> Bool {
        walk(stored) != nil && readAll(stored)
    }

    /// The counts' and sums' deltas of the row ``readForRemoval(_:)`` read, once it is deleted.
    mutating func takeRemoval() {
        for s in sums.indices {
            guard case .int(let raw) = readValues[sums[s].foreignKey] else { continue }
            sums[s].deltas.leave(sums[s].source.map { readValues[$0] } ?? .null, parent: UInt64(bitPattern: raw),
                                 member: 0)
        }
    }

    /// Walks the row `stored`, noting where each value starts and ends; its field count, or nil
    /// when the general path must take it. Every value is walked (each must fit, as decoding
    /// checks), and a decimal must be one decoding takes: the general path would throw for the
    /// row.
    private mutating func walk(_ stored: UnsafeRawBufferPointer) -> Int? {
        let fields = entity.fields
        guard let count = RowCodec.quickFieldCount(stored, layout: fields.count) else { return nil }
        var at = RowCodec.quickValuesStart(count: count)
        for i in 0..<fields.count {
            guard i < count, RowCodec.quickIsPresent(i, in: stored) else {
                starts[i] = -1
                continue
            }
            guard let end = RowCodec.quickValueEnd(fields[i].type, in: stored, at: at) else { return nil }
            if fields[i].type == .decimal,
               !DecimalCoding.decodes(sign: stored[at], mantissaLength: Int(stored[at + 2])) { return nil }
            starts[i] = at
            ends[i] = end
            at = end
        }
        return count
    }

    /// The row ``rewrite(_:same:)`` made last.
    var newRow: [UInt8] { out }

    /// Decodes the values of ``readFields`` of the row walked last into ``readValues``; false
    /// when one does not decode.
    private mutating func readAll(_ stored: UnsafeRawBufferPointer) -> Bool {
        for i in readFields {
            guard starts[i] >= 0 else {
                readValues[i] = .null
                continue
            }
            var reader = RowCodec.Reader(bytes: UnsafeRawBufferPointer(rebasing: stored[starts[i]..<ends[i]]))
            guard let value = try? RowCodec.readValue(entity.fields[i].type, from: &reader) else { return false }
            readValues[i] = value
        }
        return true
    }
}

/// The rows a transaction rewrote from their bytes (``RowRewrite``), for its change set: each
/// rewrite's old and new bytes, end to end.
struct RewrittenRows {
    struct Entry {
        let key: RowKey
        let old: Range<Int>
        /// Nil: deleted.
        let new: Range<Int>?
    }

    private(set) var bytes: [UInt8] = []
    private(set) var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }

    mutating func append(_ key: RowKey, old: UnsafeRawBufferPointer, new: [UInt8]?) {
        let oldStart = bytes.count
        bytes.append(contentsOf: old)
        let newStart = bytes.count
        if let new { bytes.append(contentsOf: new) }
        entries.append(Entry(key: key, old: oldStart..<newStart, new: new == nil ? nil : newStart..<bytes.count))
    }

    /// The row of `entry`'s old or new bytes, decoded; nil if they do not decode (never for
    /// bytes a rewrite took).
    func row(_ range: Range<Int>, _ entity: EntityDescription) -> [StoredValue]? {
        bytes.withUnsafeBytes { try? RowCodec.decode(UnsafeRawBufferPointer(rebasing: $0[range]), fields: entity.fields) }
    }
}
