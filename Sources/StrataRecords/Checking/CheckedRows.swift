/// One entity's rows as the checker read them.
struct CheckedRows {
    /// Primary keys, ascending (the rows tree's order).
    var keys: [UInt64] = []
    var rows: [[StoredValue]] = []
    var position: [UInt64: Int] = [:]

    mutating func append(_ pk: UInt64, _ row: [StoredValue]) {
        position[pk] = rows.count
        keys.append(pk)
        rows.append(row)
    }

    func row(_ pk: UInt64) -> [StoredValue]? { position[pk].map { rows[$0] } }
}

/// A reader whose rows are the ones a ``RecordCheck`` read and decoded: the derivation
/// engine's evaluator recomputes row-local derived values through it, so each to-one hop is a
/// dictionary lookup instead of a tree descent and a decode. Rows that did not decode read as
/// missing (they are reported already). Lives only for one check.
final class CheckedRowsReader: RecordReader {
    unowned let check: RecordCheck

    init(model: Model, source: TreeSource, check: RecordCheck) {
        self.check = check
        super.init(model: model, source: source)
    }

    override func row(_ key: RowKey) throws -> [StoredValue]? {
        guard key.entity >= 0, key.entity < check.entities.count else { return nil }
        return check.entities[key.entity].row(key.pk)
    }
}
