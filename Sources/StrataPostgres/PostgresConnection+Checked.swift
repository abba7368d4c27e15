import Logging
import PostgresNIO
import Synchronization

extension PostgresConnection {
    /// Runs `query`, answering with an error as soon as the connection closes: PostgresNIO 1.33
    /// never answers a query written to a closed connection (fixed upstream in postgres-nio
    /// #487, reverted in #501), so a replicator whose connection dropped would wait forever —
    /// in the `ROLLBACK` after a failed statement, or in the next round of `follow`. Checking
    /// `isClosed` first is not enough: the connection can close between the check and the
    /// write (CI saw that hang once in a few hundred cuts), so the query races the connection's
    /// close and the first to finish answers. Every statement of the replicator goes through here.
    @discardableResult
    func checkedQuery(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        guard !isClosed else { throw ReplicationError.connectionFailed(reason: "the connection was closed") }
        return try await queryAnsweredOnClose(query, logger: logger)
    }

    /// Runs `query`, answered by its result or by the connection's close, whichever comes first.
    /// A query PostgresNIO never answers leaves its task suspended (a few hundred bytes, once
    /// per statement caught by a drop): nothing can resume it, and nothing waits for it.
    func queryAnsweredOnClose(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        try await withCheckedThrowingContinuation { continuation in
            let answer = FirstAnswer(continuation)
            closeFuture.whenComplete { _ in
                answer.give(.failure(ReplicationError.connectionFailed(reason: "the connection was closed")))
            }
            Task {
                do {
                    answer.give(.success(try await self.query(query, logger: logger)))
                } catch {
                    answer.give(.failure(error))
                }
            }
        }
    }
}

/// A continuation resumed by the first of several racers to answer; later answers are dropped.
///
/// Invariant: the continuation is resumed exactly once — `give` takes it out under the lock
/// before resuming, so every later `give` finds nothing.
private final class FirstAnswer<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, any Error>?>

    init(_ continuation: CheckedContinuation<Value, any Error>) {
        self.continuation = Mutex(continuation)
    }

    func give(_ result: Result<Value, any Error>) {
        let waiting = continuation.withLock { continuation in
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(with: result)
    }
}
