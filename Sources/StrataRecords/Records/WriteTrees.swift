import StrataStorage

/// A write transaction's handles on the record layer's storage trees, by entity and slot, so
/// that writing a row or an entry costs no lookup by name. Each is created on first use. The
/// record layer never drops one of these trees inside a transaction (migration runs its own),
/// so a handle stays valid for the transaction's life.
final class WriteTrees {
    private let tx: WriteTransaction
    // Read per row written (and per point read); unchecked for exclusivity at run time (~80
    // instructions an access): each access is a plain load or store of one element.
    @exclusivity(unchecked) private var rowTrees: [WriteTree?]
    @exclusivity(unchecked) private var indexTrees: [[WriteTree?]]
    @exclusivity(unchecked) private var inverseTrees: [[WriteTree?]]

    init(tx: WriteTransaction, model: Model) {
        self.tx = tx
        rowTrees = Array(repeating: nil, count: model.entities.count)
        indexTrees = model.entities.map { Array(repeating: nil, count: $0.indexFields.count) }
        inverseTrees = model.entities.map { Array(repeating: nil, count: $0.fields.count) }
    }

    func rows(_ e: EntityDescription) throws -> WriteTree {
        if let t = rowTrees[e.index] { return t }
        let t = try tx.tree(RecordTrees.rows(e), createIfMissing: true)!
        rowTrees[e.index] = t
        return t
    }

    /// `e`'s rows tree if it exists (a read must not create it), kept once found.
    func existingRows(_ e: EntityDescription) throws -> WriteTree? {
        if let t = rowTrees[e.index] { return t }
        guard let t = try tx.tree(RecordTrees.rows(e)) else { return nil }
        rowTrees[e.index] = t
        return t
    }

    func index(_ e: EntityDescription, _ i: Int) throws -> WriteTree {
        if let t = indexTrees[e.index][i] { return t }
        let t = try tx.tree(RecordTrees.index(e, i), createIfMissing: true)!
        indexTrees[e.index][i] = t
        return t
    }

    func inverse(_ e: EntityDescription, _ field: Int) throws -> WriteTree {
        if let t = inverseTrees[e.index][field] { return t }
        let t = try tx.tree(RecordTrees.inverse(e, field), createIfMissing: true)!
        inverseTrees[e.index][field] = t
        return t
    }
}
