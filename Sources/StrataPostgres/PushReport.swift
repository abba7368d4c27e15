import Foundation
import StrataRecords

/// What one ``PostgresReplicator/push()`` did.
public struct PushReport: Sendable, Equatable {
    /// Strata transactions applied (each as one PostgreSQL transaction).
    public var transactions = 0
    /// Rows written, deleted, linked or unlinked.
    public var rows = 0
    /// Whether the tables were filled afresh from a snapshot of the store (the first push, or
    /// after the history the replication needed was purged).
    public var copiedAll = false
    /// The token of the last transaction PostgreSQL holds now.
    public var token: HistoryToken = .start
    /// How long it took, in seconds.
    public var seconds: Double = 0
    /// How long ago the last transaction applied was committed, in seconds, when it applied any.
    public var lagSeconds: Double?

    /// Rows per second.
    public var rowsPerSecond: Double { seconds > 0 ? Double(rows) / seconds : 0 }
}
