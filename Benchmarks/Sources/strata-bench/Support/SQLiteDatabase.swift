import CSQLite

/// One SQLite connection as the benchmarks use it: opened in WAL mode with a synchronous
/// level and a cache the size of Strata's default budget, statements prepared once, errors
/// as ``BenchError`` with SQLite's message.
final class SQLiteDatabase {
    private(set) var handle: OpaquePointer?
    private var prepared: [OpaquePointer] = []

    /// SQLITE_STATIC: bound bytes stay alive until the statement is reset.
    static let staticBytes: sqlite3_destructor_type? = nil
    /// SQLITE_TRANSIENT: SQLite copies bound bytes before the call returns.
    static let transientBytes = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Opens (creating) `path` with `journal_mode=WAL`, `synchronous` as given and
    /// `cache_size` = 256 MiB. NOMUTEX: one thread uses the connection.
    init(path: String, synchronous: String) throws {
        let rc = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, handle != nil else {
            defer { sqlite3_close(handle) }
            throw Self.error(handle, rc, "open \(path)")
        }
        do {
            try execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=\(synchronous); PRAGMA cache_size=-262144;")
        } catch {
            sqlite3_close(handle)
            throw error
        }
    }

    static func error(_ db: OpaquePointer?, _ rc: Int32, _ what: String) -> BenchError {
        let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        return BenchError("sqlite: \(what): \(message) (\(rc))")
    }

    /// Runs SQL text (one or more statements, no parameters).
    func execute(_ sql: String) throws {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw Self.error(handle, rc, sql) }
    }

    /// A statement kept until ``close()``.
    func prepare(_ sql: String) throws -> OpaquePointer {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw Self.error(handle, rc, sql) }
        prepared.append(stmt)
        return stmt
    }

    /// Steps a statement that returns no rows (or whose rows are not needed) and resets it.
    func run(_ stmt: OpaquePointer) throws {
        let rc = sqlite3_step(stmt)
        sqlite3_reset(stmt)
        guard rc == SQLITE_DONE || rc == SQLITE_ROW else { throw Self.error(handle, rc, String(cString: sqlite3_sql(stmt))) }
    }

    /// Steps through every row, calling `row` for each, then resets.
    func forEachRow(_ stmt: OpaquePointer, _ row: (OpaquePointer) -> Void) throws {
        defer { sqlite3_reset(stmt) }
        while true {
            let rc = sqlite3_step(stmt)
            if rc == SQLITE_DONE { return }
            guard rc == SQLITE_ROW else { throw Self.error(handle, rc, String(cString: sqlite3_sql(stmt))) }
            row(stmt)
        }
    }

    /// The first column of the first row of a query without parameters, as an integer.
    func integer(_ sql: String) throws -> Int64 {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw Self.error(handle, rc, sql) }
        defer { sqlite3_finalize(stmt) }
        let step = sqlite3_step(stmt)
        guard step == SQLITE_ROW else { throw Self.error(handle, step, sql) }
        return sqlite3_column_int64(stmt, 0)
    }

    func bind(_ stmt: OpaquePointer, _ index: Int32, text: String) {
        sqlite3_bind_text(stmt, index, text, -1, Self.transientBytes)
    }

    /// Finalizes every statement and closes; the last connection's close checkpoints the WAL
    /// into the database and deletes it.
    func close() throws {
        guard let handle else { return }
        for stmt in prepared { sqlite3_finalize(stmt) }
        prepared = []
        let rc = sqlite3_close(handle)
        self.handle = nil
        guard rc == SQLITE_OK else { throw Self.error(nil, rc, "close") }
    }

    deinit { if handle != nil { try? close() } }
}
