import StrataStorage

/// A long-lived snapshot of a record store: a ``RecordReader`` that stays valid until
/// ``close()`` (or until the snapshot is released), for readers that span many calls (the
/// object layer's contexts read their faults through one).
///
/// While it lives it pins its commit's pages, as the storage layer's `ReadTransaction` does:
/// close it, or move on to a newer one, when the store has moved on. Not `Sendable`: use it where it was made.
public final class RecordSnapshot {
    /// The reader over this snapshot.
    public let reader: RecordReader
    private let transaction: ReadTransaction

    init(model: Model, transaction: ReadTransaction, wordBatches: WordBatchCache? = nil) {
        self.transaction = transaction
        self.reader = RecordReader(model: model, source: .read(transaction))
        reader.wordBatches = wordBatches
    }

    deinit { close() }

    /// The id of the last transaction the snapshot sees (the storage layer's
    /// `Store.lastCommittedTransactionID` is larger once another commit landed).
    public var transactionID: UInt64 { transaction.transactionID }

    /// Ends the snapshot: its reader then throws `StrataError.closed`. Closing again does nothing.
    public func close() {
        reader.isOpen = false
        transaction.close()
    }
}

extension RecordStore {
    /// A snapshot of the latest commit that lives until it is closed or released.
    public func snapshot() throws -> RecordSnapshot {
        RecordSnapshot(model: model, transaction: try storage.snapshot(), wordBatches: wordBatches)
    }
}
