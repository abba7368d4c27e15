import Foundation
import StrataRecords

/// What one ``PostgresReplicator/pull()`` did.
public struct PullReport: Sendable, Equatable {
    /// Changes taken from PostgreSQL's change table (a row inserted, updated or deleted, a
    /// link made or broken, by anyone but the replicator).
    public var changes = 0
    /// Store rows inserted, updated or deleted and links made or broken to apply them.
    public var rowsApplied = 0
    /// Rows inserted in PostgreSQL that took a store key (their key in PostgreSQL changed to it).
    public var rowsKeyed = 0
    /// Properties changed in PostgreSQL and in the store since the last exchange: the store's
    /// value was kept (the conflict rule, decision 63).
    public var conflicts = 0
    /// Changes to rows deleted on the other side since the last exchange: the deletion won.
    public var deletionsWon = 0
    /// The properties counted in ``conflicts``, and those the store changed since its previous
    /// pull that another writer changed since (its write lost), with both values (decision 111).
    public var conflictDetails: [ReplicationConflict] = []
    /// Rows this pull refused because they broke the model (decision 111), in the order decided.
    public var refusals: [ReplicationRefusal] = []
    /// The store's history token of the transaction that applied them, if one did.
    public var token: HistoryToken?
    /// How long it took, in seconds.
    public var seconds: Double = 0
}
