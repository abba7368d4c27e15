import StrataStorage

/// A write transaction's handles on the record layer's storage trees, by entity and slot, so
/// that writing a row or an entry costs no lookup by name. Each is created on first use. The
/// record layer never drops one of these trees inside a transaction (migration runs its own),
/// so a handle stays valid for the transaction's life.
final class WriteTrees {
    private let tx: WriteTransaction
    // Read per row written (and per point read); unchecked for exclusivity at run time (a
    // check is a `swift_beginAccess` call per access; decision 50): each access is a plain
    // load or store of one element.
    @exclusivity(unchecked) private var rowTrees: [WriteTree?]
    @exclusivity(unchecked) private var indexTrees: [[WriteTree?]]
    @exclusivity(unchecked) private var inverseTrees: [[WriteTree?]]
    private var wordTrees: [[WriteTree?]]

    init(tx: WriteTransaction, model: Model) {
        self.tx = tx
        rowTrees = Array(repeating: nil, count: model.entities.count)
        indexTrees = model.entities.map { Array(repeating: nil, count: $0.indexFields.count) }
        inverseTrees = model.entities.map { Array(repeating: nil, count: $0.fields.count) }
        wordTrees = model.entities.map { Array(repeating: nil, count: $0.fullTextFields.count) }
    }

    func rows(_ entity: EntityDescription) throws -> WriteTree {
        if let tree = rowTrees[entity.index] { return tree }
        let tree = try tx.treeCreatingIfMissing(RecordTrees.rows(entity))
        rowTrees[entity.index] = tree
        return tree
    }

    /// `entity`'s rows tree if it exists (a read must not create it), kept once found.
    func existingRows(_ entity: EntityDescription) throws -> WriteTree? {
        if let tree = rowTrees[entity.index] { return tree }
        guard let tree = try tx.tree(RecordTrees.rows(entity)) else { return nil }
        rowTrees[entity.index] = tree
        return tree
    }

    func index(_ entity: EntityDescription, _ i: Int) throws -> WriteTree {
        if let tree = indexTrees[entity.index][i] { return tree }
        let tree = try tx.treeCreatingIfMissing(RecordTrees.index(entity, i))
        indexTrees[entity.index][i] = tree
        return tree
    }

    func words(_ entity: EntityDescription, _ i: Int) throws -> WriteTree {
        if let tree = wordTrees[entity.index][i] { return tree }
        let tree = try tx.treeCreatingIfMissing(RecordTrees.words(entity, i))
        wordTrees[entity.index][i] = tree
        return tree
    }

    func inverse(_ entity: EntityDescription, _ field: Int) throws -> WriteTree {
        if let tree = inverseTrees[entity.index][field] { return tree }
        let tree = try tx.treeCreatingIfMissing(RecordTrees.inverse(entity, field))
        inverseTrees[entity.index][field] = tree
        return tree
    }
}
