import Dispatch
import Foundation
import Synchronization

/// One connection to a PostgreSQL server through libpq, PostgreSQL's own client library
/// (decision 76). libpq's calls block, so each connection makes them on a serial dispatch queue
/// of its own, one at a time: a statement waiting for the network holds that queue's thread,
/// never one of Swift's cooperative threads.
///
/// Every failure is a ``ReplicationError``: `connectionFailed` when the connection is gone (it
/// is then closed, and every later statement fails at once), `server` when the server refused a
/// statement, `loginRefused` when it refused the login. No error holds a statement's text or
/// values.
final class PostgresConnection: @unchecked Sendable {
    // @unchecked: `handle` is read and written only on `queue`; `closed` is atomic.

    private let queue = DispatchQueue(label: "strata.postgres.connection")
    /// The libpq connection; nil once closed. Only on `queue`.
    private var handle: LibPQ.Connection?
    private let closed = Atomic<Bool>(false)

    private init(handle: LibPQ.Connection) {
        self.handle = handle
    }

    deinit {
        if let handle { LibPQ.finish(handle) }
    }

    /// Opens a connection to `destination`.
    static func connect(to destination: PostgresDestination) async throws -> PostgresConnection {
        let parameters = destination.libpqParameters
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                switch LibPQ.connect(parameters) {
                case .success(let handle):
                    continuation.resume(returning: PostgresConnection(handle: handle))
                case .failure(let failure):
                    continuation.resume(throwing: destination.connectError(failure.message))
                }
            }
        }
    }

    /// Whether the connection was closed, by ``close()`` or because it failed.
    var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Runs `query` and returns its rows (none for a statement that returns none).
    @discardableResult
    func query(_ query: PostgresQuery) async throws -> PostgresRows {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.run(query) })
            }
        }
    }

    /// Runs `sql`, a `COPY … FROM STDIN`, with `data` as its rows (in the statement's format).
    func copy(_ sql: String, data: [UInt8]) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            queue.async {
                continuation.resume(with: Result {
                    let handle = try self.liveHandle()
                    guard let result = LibPQ.copyIn(handle, sql: sql, data: data) else { throw self.failed(handle) }
                    guard result.succeeded else {
                        guard LibPQ.isOK(handle) else { throw self.failed(handle) }
                        let (message, sqlState) = result.error
                        throw ReplicationError.server(message: message, sqlState: sqlState)
                    }
                })
            }
        }
    }

    /// Closes the connection (at once if it is idle, after the statement running otherwise).
    func close() {
        closed.store(true, ordering: .releasing)
        queue.async {
            if let handle = self.handle { LibPQ.finish(handle) }
            self.handle = nil
        }
    }

    /// Listens on `channel` until the task is cancelled, calling `listening` once the `LISTEN`
    /// took effect and `notified` for each batch of notifications received after. Returns when
    /// cancelled; throws when the connection fails. The connection is busy meanwhile: listen
    /// on a connection of its own.
    func listen(on channel: String, listening: @escaping @Sendable () -> Void,
                notified: @escaping @Sendable () -> Void) async throws {
        try await query(PostgresQuery(unsafeSQL: "LISTEN \(SQL.name(channel))"))
        listening()
        let cancelled = CancellationFlag()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                queue.async {
                    continuation.resume(with: Result { try self.waitForNotifications(until: cancelled, notified) })
                }
            }
        } onCancel: {
            cancelled.set()
        }
    }

    // MARK: On the queue

    /// The live connection, or `connectionFailed`.
    private func liveHandle() throws -> LibPQ.Connection {
        guard let handle, !isClosed else { throw ReplicationError.connectionFailed(reason: "the connection was closed") }
        return handle
    }

    /// Marks the connection failed and frees it; the error to throw.
    private func failed(_ handle: LibPQ.Connection) -> ReplicationError {
        let message = LibPQ.errorMessage(handle).trimmingCharacters(in: .whitespacesAndNewlines)
        closed.store(true, ordering: .releasing)
        LibPQ.finish(handle)
        self.handle = nil
        return .connectionFailed(reason: message.isEmpty ? "the connection was lost" : message)
    }

    private func run(_ query: PostgresQuery) throws -> PostgresRows {
        let handle = try liveHandle()
        guard let result = LibPQ.execute(handle, sql: query.sql, bindings: query.bindings) else {
            throw failed(handle)
        }
        guard result.succeeded else {
            guard LibPQ.isOK(handle) else { throw failed(handle) }
            let (message, sqlState) = result.error
            throw ReplicationError.server(message: message, sqlState: sqlState)
        }
        return PostgresRows(result: result)
    }

    /// Waits for notifications in slices of 100 ms (so a cancellation is seen within one).
    private func waitForNotifications(until cancelled: CancellationFlag, _ notified: @Sendable () -> Void) throws {
        let handle = try liveHandle()
        while !cancelled.isSet {
            guard !isClosed else { throw ReplicationError.connectionFailed(reason: "the connection was closed") }
            guard LibPQ.waitReadable(handle, milliseconds: 100) else { continue }
            guard LibPQ.consumeInput(handle), LibPQ.isOK(handle) else { throw failed(handle) }
            if LibPQ.takeNotifications(handle) > 0 { notified() }
        }
    }
}

/// A flag a task's cancellation handler sets and a wait on a connection's queue reads.
private final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}

extension PostgresDestination {
    /// The connection's parameters as libpq's keywords.
    var libpqParameters: [(String, String)] {
        var parameters: [(String, String)] = [
            ("host", host), ("port", String(port)), ("user", user), ("dbname", database),
            ("sslmode", tls.rawValue), ("connect_timeout", "10"), ("application_name", "strata"),
            ("client_encoding", "UTF8"),
            // Without a Kerberos setup, trying GSSAPI encryption first only slows the connect.
            ("gssencmode", "disable"),
            // A server that vanishes without closing the connection is noticed within ~25 s.
            ("keepalives", "1"), ("keepalives_idle", "10"), ("keepalives_interval", "5"), ("keepalives_count", "3"),
        ]
        if let password { parameters.append(("password", password)) }
        if tls == .verifyFull {
            // libpq's default authority file is ~/.postgresql/root.crt; without one named, the
            // system's authorities, as a TLS client is expected to trust.
            let system = "/etc/ssl/certs/ca-certificates.crt"
            if let root = rootCertificatePath {
                parameters.append(("sslrootcert", root))
            } else if FileManager.default.fileExists(atPath: system) {
                parameters.append(("sslrootcert", system))
            }
        }
        return parameters
    }

    /// The error for a connection libpq could not open, from its message.
    func connectError(_ message: String) -> ReplicationError {
        let text = message.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.contains("no password supplied") {
            return .loginRefused(user: user, database: database, reason: "the server wants a password and none was given")
        }
        if text.contains("does not support SSL") {
            return .connectionFailed(reason: "the server does not offer TLS")
        }
        // A FATAL error the server sent during the login: the login was refused, unless the
        // server could not take a connection at all (starting, recovering from a crash —
        // "not yet accepting connections" until its log is replayed —, stopping, full): a
        // follower tries again.
        if let range = text.range(of: "FATAL:") {
            let reason = text[range.upperBound...].trimmingCharacters(in: .whitespaces)
            let busy = ["starting up", "shutting down", "too many", "recovery mode", "not yet accepting connections"]
                .contains { reason.contains($0) }
            return busy ? .connectionFailed(reason: reason) : .loginRefused(user: user, database: database, reason: reason)
        }
        return .connectionFailed(reason: text)
    }
}
