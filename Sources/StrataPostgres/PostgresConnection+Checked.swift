import Logging
import PostgresNIO

extension PostgresConnection {
    /// Runs `query`, refusing to write it to a connection already closed: PostgresNIO 1.33
    /// never answers a query written to a closed connection (fixed upstream in postgres-nio
    /// #487, reverted in #501), so a replicator whose connection dropped would wait forever —
    /// in the `ROLLBACK` after a failed statement, or in the next round of `follow`. Every
    /// statement of the replicator goes through here.
    @discardableResult
    func checkedQuery(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        guard !isClosed else { throw ReplicationError.connectionFailed(reason: "the connection was closed") }
        return try await self.query(query, logger: logger)
    }
}
