import Foundation
import StrataRecords
import StrataStorage

/// Where a store's replication stands, read from the store and from PostgreSQL without
/// changing either (``PostgresReplicator/status()``).
public struct ReplicationStatus: Sendable, Equatable {
    /// The replication's name.
    public var name: String
    /// The store's number in the dataset's register (its range of keys), nil when it has not
    /// joined one.
    public var replica: Int64?
    /// The other stores of the dataset, by name (retired ones left out).
    public var otherStores: [String]
    /// The last store transaction PostgreSQL holds (nil: never pushed).
    public var pushedToken: HistoryToken?
    /// The store's last transaction.
    public var storeToken: HistoryToken
    /// Store transactions not pushed yet, and when the oldest of them committed.
    public var unpushedTransactions: Int
    public var oldestUnpushed: Date?
    /// Changes other writers made that wait in this store's queue for its next pull.
    public var queuedChanges: Int
    /// Rows pulls of any store refused (``ReplicationRefusal``), as `strata_rejects` holds them.
    public var refusals: Int

    /// How far the pushes are behind the store: the age of its oldest unpushed transaction
    /// (0 when everything is pushed).
    public var pushLagSeconds: Double { oldestUnpushed.map { max(0, Date().timeIntervalSince($0)) } ?? 0 }
}

extension PostgresReplicator {
    /// Where this replication stands (see ``ReplicationStatus``); writes nothing.
    public func status() async throws -> ReplicationStatus {
        let connection = try await connect()
        defer { connection.close() }
        let storeToken = try store.lastHistoryToken()
        let pushed = try await run(on: connection, { try await Self.exists(ReplicationSchema.stateTable, on: $0) })
            ? try await storedToken(on: connection) : nil
        var unpushed = 0
        var oldest: Date?
        if let pushed {
            do {
                try forEachHistoryTransaction(after: pushed) { transaction in
                    if oldest == nil { oldest = transaction.date }
                    unpushed += 1
                    return true
                }
            } catch StrataError.historyPurged {
                unpushed = Int(storeToken.value - pushed.value)
            }
        } else {
            unpushed = Int(storeToken.value)
        }
        var replica: Int64?
        var others: [String] = []
        for store in try await registeredStores(on: connection) where !store.retired {
            if store.name == name { replica = store.number } else { others.append(store.name) }
        }
        var queued = 0
        if let replica, try await run(on: connection, { try await Self.exists(ReplicationSchema.changeTable, on: $0) }) {
            var bindings = PostgresBindings()
            bindings.append(replica)
            let rows = try await run(on: connection) {
                try await $0.query(PostgresQuery(
                    unsafeSQL: "SELECT count(*) FROM \(SQL.name(ReplicationSchema.changeTable)) "
                        + "WHERE replica = $1 OR (replica IS NULL AND $1 = 0)", binds: bindings))
            }
            queued = Int(try rows.decode(Int64.self).first ?? Int64(0))
        }
        var refusals = 0
        if try await run(on: connection, { try await Self.exists(Self.rejectsTable, on: $0) }) {
            let rows = try await run(on: connection) {
                try await $0.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(SQL.name(Self.rejectsTable))"))
            }
            refusals = Int(try rows.decode(Int64.self).first ?? Int64(0))
        }
        return ReplicationStatus(name: name, replica: replica, otherStores: others, pushedToken: pushed,
                                 storeToken: storeToken, unpushedTransactions: unpushed, oldestUnpushed: oldest,
                                 queuedChanges: queued, refusals: refusals)
    }

}
