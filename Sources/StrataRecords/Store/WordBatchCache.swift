import Synchronization

/// A store's word-index batches of recent changes, decoded (``WordChanges/Decoded``), kept by
/// tree and batch id for every search that meets them (decision 98).
///
/// A batch's content never changes after its transaction commits and its id is never given to
/// another batch in the store's life (``WordChanges/batchID(transaction:flush:)``), so a batch
/// decoded once serves every snapshot that holds it, in any read transaction: a search pays a
/// hash lookup per batch, not a decode of its entries. A commit hands over the batches it
/// wrote, as written, and forgets those it merged away. Only committed batches enter: a write
/// transaction reads its own batches afresh (they may yet roll back, and a rolled-back
/// transaction's ID is given again). The cache holds at most ``changeBound`` changes; past it,
/// the oldest batches (lowest ids, the first a merge removes) go first.
final class WordBatchCache: Sendable {
    /// Changes held at most by default (~20–40 bytes each, with the words): a few indexes' worth
    /// of pending batches (each index holds at most 7 batches of at most 4,096 changes).
    static let defaultChangeBound = 1 << 17

    /// Changes held at most.
    let changeBound: Int

    /// A cache holding at most `changeBound` changes.
    init(changeBound: Int = WordBatchCache.defaultChangeBound) { self.changeBound = changeBound }

    private struct Key: Hashable {
        let tree: String
        let id: UInt64
    }

    private struct State {
        var batches: [Key: WordChanges.Decoded] = [:]
        var changes = 0
    }

    private let state = Mutex(State())

    /// Batch `id` of word index `tree`, if decoded before.
    func batch(tree: String, id: UInt64) -> WordChanges.Decoded? {
        state.withLock { $0.batches[Key(tree: tree, id: id)] }
    }

    /// Keeps committed batch `id` of `tree`, decoded, dropping the oldest batches past the bound.
    /// `replacing`: the committing writer's batch replaces any entry under its id (a reader's
    /// decode never does; both hold the same content unless an id was given twice).
    func keep(_ decoded: WordChanges.Decoded, tree: String, id: UInt64, replacing: Bool = false) {
        guard decoded.changeCount <= changeBound else { return }
        state.withLock { state in
            let key = Key(tree: tree, id: id)
            if let old = state.batches[key] {
                guard replacing else { return }
                state.changes -= old.changeCount
                state.batches[key] = nil
            }
            while state.changes + decoded.changeCount > changeBound,
                  let oldest = state.batches.keys.min(by: { $0.id < $1.id }) {
                state.changes -= state.batches.removeValue(forKey: oldest)?.changeCount ?? 0
            }
            state.batches[key] = decoded
            state.changes += decoded.changeCount
        }
    }

    /// What a commit did to the batches: those it `written` kept, those up to each index's id
    /// in `merged` forgotten.
    func commit(written: [(tree: String, id: UInt64, batch: WordChanges.Decoded)], merged: [String: UInt64]) {
        for (tree, last) in merged { forget(tree: tree, through: last) }
        for batch in written { keep(batch.batch, tree: batch.tree, id: batch.id, replacing: true) }
    }

    /// Forgets the batches of `tree` up to id `last`: a commit merged them into the blocks, so
    /// only snapshots older than it still hold them (and decode them again if they search).
    func forget(tree: String, through last: UInt64) {
        state.withLock { state in
            for key in state.batches.keys where key.tree == tree && key.id <= last {
                state.changes -= state.batches.removeValue(forKey: key)?.changeCount ?? 0
            }
        }
    }

    /// Batches held, of word index `tree` or of every index (for tests).
    func count(tree: String? = nil) -> Int {
        state.withLock { state in state.batches.keys.filter { tree == nil || $0.tree == tree }.count }
    }
}
