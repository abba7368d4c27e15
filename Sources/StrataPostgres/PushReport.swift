import Foundation
import StrataRecords

/// What one ``PostgresReplicator/push()`` did.
public struct PushReport: Sendable, Equatable {
    /// Strata transactions applied.
    public var transactions = 0
    /// PostgreSQL transactions that applied them (each holding one or more whole Strata
    /// transactions), the copy not counted.
    public var batches = 0
    /// The changes of those transactions' history applied: each insert, update, delete, link
    /// and unlink.
    public var changes = 0
    /// Rows PostgreSQL wrote for them (upserted, deleted, linked, unlinked; a row several
    /// transactions of one batch changed is written once), and those the copy wrote.
    public var rows = 0
    /// Whether the tables were filled afresh from a snapshot of the store (the first push, or
    /// after the history the replication needed was purged), or, with ``joinedDataset``, the
    /// store from the tables.
    public var copiedAll = false
    /// Whether this push joined a dataset other stores write to and took a copy of its rows
    /// into the store instead (``copiedAll`` is then true too).
    public var joinedDataset = false
    /// The token of the last transaction PostgreSQL holds now.
    public var token: HistoryToken = .start
    /// Batches PostgreSQL rolled back for a deadlock or a serialization failure with another
    /// writer (another store's push, a server application), and that were applied again.
    public var retries = 0
    /// How long it took, in seconds.
    public var seconds: Double = 0
    /// How long ago the last transaction applied was committed, in seconds, when it applied any.
    public var lagSeconds: Double?

    /// Rows written per second.
    public var rowsPerSecond: Double { seconds > 0 ? Double(rows) / seconds : 0 }
    /// History changes applied per second.
    public var changesPerSecond: Double { seconds > 0 ? Double(changes) / seconds : 0 }
}
