import Foundation
import StrataStorage

extension RecordReader {
    /// Verifies the record layer from scratch: every structure the record layer maintains
    /// (FORMAT.md §12) against a recomputation from the rows. Returns the problems found (empty:
    /// consistent), at most `limit` of them.
    ///
    /// What is checked, structure by structure (a structure the record layer writes that is not
    /// on this list is a gap in the checker):
    ///
    /// - **Trees.** Every tree whose name looks like the record layer's (`records:…`, `rows:`,
    ///   `index:`, `unique:`, `inverse:`, `join:`, `extremes:`) belongs to the model: the rows of
    ///   an entity, one of its indexes or uniqueness constraints, the inverse of one of its to-one
    ///   relationships, one side of one of its many-to-many relationships, the bookkeeping of one
    ///   of its `@min`/`@max` attributes. Any other is reported as unknown.
    /// - **`records:meta`.** `schema` is the model's text; `version`, when present, 8 bytes holding
    ///   the model's version; every other key is `next:<Entity>` of an entity of the model (or
    ///   the key format and history entries).
    /// - **Key counters** (`next:<Entity>`): 8 bytes, present when the entity has rows, above
    ///   the largest primary key in use and below `UInt64.max` (the next insert needs a key).
    /// - **Rows** (`rows:<Entity>`): keys are 8 bytes (else `corrupt` is thrown); every row
    ///   decodes, and its bytes are exactly what the row codec writes for the decoded values
    ///   (nothing appended, no other spelling); required attributes, to-one relationships and
    ///   auxiliary fields hold a value; integers fit their attribute's width; doubles, dates and
    ///   decimals are finite; every to-one relationship points at an existing row.
    /// - **Fetch indexes** (`index:`): exactly one entry per row, nothing else; values empty.
    /// - **Word indexes** (`words:`): exactly one entry per distinct word of each row's indexed
    ///   values, holding its count, nothing else.
    /// - **Uniqueness** (`unique:`): no two rows share constrained values; exactly one entry per
    ///   row without a nil among them, nothing else, each entry's value the primary key of the
    ///   row that holds those values. Inside a write transaction the trees hold the values as
    ///   the transaction found them (they move at commit), and are checked against those.
    /// - **Inverses** (`inverse:`): exactly one entry per row whose to-one relationship is set,
    ///   nothing else; values empty.
    /// - **Many-to-many** (`join:`): keys are 16 bytes (else `corrupt` is thrown); both rows of
    ///   every link exist; every link is stored on both sides; values empty.
    /// - **`@min`/`@max` bookkeeping** (`extremes:`): exactly one entry (parent, child value,
    ///   child) for every member of every parent with a non-nil value, nothing else; values empty.
    /// - **Derived values**: each equals its recomputation from the rows (copies through to-one,
    ///   string functions, arithmetic, every aggregate), by the derivation engine's own
    ///   evaluator and the arithmetic of `AggregateArithmetic`, exactly (strings byte for
    ///   byte); `now()` is set when required (its time cannot be recomputed).
    /// - **Auxiliary fields** (FORMAT.md §12, "Row layout"): running counts and integer and
    ///   decimal running sums equal their recomputation exactly; a double running sum
    ///   (sum + compensation) is within `RunningSumTolerance` of the compensated sum from
    ///   scratch; and the derived value equals exactly what its own auxiliary fields give.
    ///
    /// Inside a write transaction the transaction settles first and its pending rows are
    /// written, so the check sees what the commit would store. Reads every tree once, in key
    /// order; the cost is linear in the size of the store (hash sets and maps of the keys the
    /// rows call for; the two sides of a many-to-many compared by a sort and a merge; a to-one
    /// hop of a derived copy is a lookup among the rows already read). Memory holds every row,
    /// decoded.
    ///
    /// Throws `corrupt` for keys of the wrong length in the rows and join trees (their
    /// primary keys cannot be read), and what reading the trees throws.
    public func checkRecords(limit: Int = 100) throws -> [String] {
        try willScanRows()
        let check = RecordCheck(reader: self, limit: limit)
        try check.run()
        return check.problems
    }
}

/// One run of ``RecordReader/checkRecords(limit:)``: the rows read once, then every structure
/// compared with what the rows say it must hold.
final class RecordCheck {
    let reader: RecordReader
    let model: Model
    let limit: Int
    private(set) var problems: [String] = []
    /// Each entity's rows as stored (decoded), in primary-key order.
    var entities: [CheckedRows] = []
    /// Every join tree's entries, in key order.
    var links: [String: [JoinPair]] = [:]
    /// To-many members through a to-one inverse, by (child entity, to-one field): parent → child rows.
    var children: [Int: [Int: [UInt64: [Int]]]] = [:]

    init(reader: RecordReader, limit: Int) {
        self.reader = reader
        self.model = reader.model
        self.limit = limit
    }

    var source: TreeSource { reader.source }
    /// A reader over the rows read by ``readRows()``, for the derivation engine's evaluator.
    lazy var rowReader = CheckedRowsReader(model: model, source: reader.source, check: self)
    /// The write transaction the check runs in, if any.
    var transaction: RecordTransaction? { reader as? RecordTransaction }

    func report(_ problem: String) {
        if problems.count < limit { problems.append(problem) }
    }

    func run() throws {
        try readRows()
        try checkTreeNames()
        try checkMeta()
        try checkHistory()
        for entity in model.entities {
            checkRowValues(entity)
            try checkIndexes(entity)
            try checkWordIndexes(entity)
            try checkUniqueness(entity)
            try checkInverses(entity)
            try checkJoins(entity)
        }
        for entity in model.entities {
            try checkExtremes(entity)
            try checkDerived(entity)
        }
    }

    // MARK: Rows

    /// Reads every row of every entity from its stored bytes: undecodable rows and bytes that
    /// are not the codec's spelling of their values are reported (the former are left out of
    /// everything that follows, so their entries elsewhere show up as unaccounted for).
    func readRows() throws {
        for entity in model.entities {
            var rows = CheckedRows()
            let tree = RecordTrees.rows(entity)
            try source.scan(tree, prefix: []) { key, cursor in
                let pk = try RecordTrees.primaryKey(key, at: 0, exactLength: 8, tree: tree)
                do {
                    let stored = cursor.isOverflow ? try cursor.copyValue() : [UInt8](cursor.value)
                    let row = try RowCodec.decode(stored, fields: entity.fields)
                    if RowCodec.encode(row, fields: entity.fields) != stored {
                        report("\(entity.name)/\(pk): the row's bytes are not what the row codec writes for its "
                               + "values (damaged or appended bytes)")
                    }
                    rows.append(pk, row)
                } catch {
                    report("\(entity.name)/\(pk): row does not decode: \(error)")
                }
                return true
            }
            entities.append(rows)
        }
    }

    /// Required values, integer widths, finite numbers and to-one targets of every row of `entity`.
    /// Rows a write transaction changed are judged at its commit, not here.
    func checkRowValues(_ entity: EntityDescription) {
        let rows = entities[entity.index]
        for (i, row) in rows.rows.enumerated() {
            let pk = rows.keys[i]
            let pending = transaction?.original(RowKey(entity: entity.index, pk: pk)) != nil
            for (slot, field) in entity.fields.enumerated() {
                let value = row[slot]
                if value.isNull {
                    if !field.isOptional && !pending && field.kind != .derived {
                        report("\(entity.name)/\(pk).\(field.name) has no value, but it is required")
                    }
                    continue
                }
                switch value {
                case .int(let integer):
                    if case .attribute = field.kind, let range = field.type.integerRange, !range.contains(integer),
                       !pending {
                        report("\(entity.name)/\(pk).\(field.name) = \(integer) does not fit \(field.type.rawValue)")
                    }
                case .double(let double) where !double.isFinite:
                    report("\(entity.name)/\(pk).\(field.name) = \(double): a stored double is always finite")
                case .date(let date) where !date.timeIntervalSinceReferenceDate.isFinite:
                    report("\(entity.name)/\(pk).\(field.name) is a date that is not finite")
                case .decimal(let decimal) where decimal.isNaN:
                    report("\(entity.name)/\(pk).\(field.name) is a decimal NaN")
                default:
                    break
                }
                if case .toOne(let target) = field.kind, case .int(let targetKey) = value,
                   entities[target].row(UInt64(bitPattern: targetKey)) == nil {
                    let targetRow = "\(model.entities[target].name)/\(UInt64(bitPattern: targetKey))"
                    report("\(entity.name)/\(pk).\(field.name) points at \(targetRow), which does not exist")
                }
            }
        }
    }
}
