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
