import StrataRecords

extension ModelContext {
    /// Merges a transaction of the store's persistent history (``ModelContainer/history(after:limit:entities:authors:)``)
    /// as it merges another context's save (``mergeChanges(from:)-(SaveNotification)``):
    /// registered objects it changed take the store's values (derived ones included) with
    /// unsaved changes kept on top, objects it deleted are marked deleted and turn into faults,
    /// and objects-did-change and observers are told. The values are read from the store as it
    /// is now, so merging transactions in token order never takes an object back to an older state.
    public func mergeChanges(from transaction: HistoryTransaction) {
        merge(RecordChanges(transaction), rereading: true)
        postObjectsDidChange()
    }
}

extension RecordChanges {
    /// What a history transaction changed, as a merge takes it: rows are read again from the
    /// store (the merge's `rereading`), so no values are carried and nothing reads the slots.
    init(_ transaction: HistoryTransaction) {
        self.init(transactionID: transaction.transactionID)
        for change in transaction.changes {
            switch change.kind {
            case .insert, .update:
                let row = RecordChanges.Row(id: change.id, values: nil, previous: nil, changedFields: [])
                if change.kind == .insert { inserted.append(row) } else { updated.append(row) }
            case .delete:
                deleted.append(RecordChanges.Row(id: change.id, values: nil, previous: nil, changedFields: []))
            case .link, .unlink:
                guard let relationship = change.relationship, let other = change.other else { continue }
                links.append(RecordChanges.Link(id: change.id, relationship: relationship, other: other,
                                                added: change.kind == .link))
            }
        }
    }
}
