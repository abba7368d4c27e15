import CSQLite

/// The SQLite baseline: the system's libsqlite3, one `WITHOUT ROWID` table so the key is the
/// B-tree key (as in a key-value store), WAL journal, prepared statements reused for every
/// operation.
final class SQLiteEngine: KVEngine {
    static let name = "sqlite"
    static var configuration: String {
        "sqlite \(String(cString: sqlite3_libversion())): WAL, synchronous=NORMAL (fills) / FULL (fillsync), "
            + "cache_size=256 MiB (Strata's default cache budget), table kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID"
    }

    private var db: OpaquePointer?
    private let begin: OpaquePointer
    private let beginRead: OpaquePointer
    private let commit: OpaquePointer
    private let insert: OpaquePointer
    private let select: OpaquePointer
    private let remove: OpaquePointer
    private let scanAll: OpaquePointer

    /// SQLite's SQLITE_STATIC: the bound bytes stay alive (they live in `KVData`) until the
    /// statement is reset, so SQLite need not copy them.
    private static let staticBytes: sqlite3_destructor_type? = nil

    private init(db: OpaquePointer) throws {
        self.db = db
        func prepare(_ sql: String) throws -> OpaquePointer {
            var stmt: OpaquePointer?
            let rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nil)
            guard rc == SQLITE_OK, let stmt else { throw SQLiteEngine.error(db, rc, sql) }
            return stmt
        }
        begin = try prepare("BEGIN IMMEDIATE")
        // A deferred BEGIN starts a read transaction at the first SELECT: one snapshot per batch.
        beginRead = try prepare("BEGIN")
        commit = try prepare("COMMIT")
        insert = try prepare("INSERT OR REPLACE INTO kv(k, v) VALUES(?, ?)")
        select = try prepare("SELECT v FROM kv WHERE k = ?")
        remove = try prepare("DELETE FROM kv WHERE k = ?")
        scanAll = try prepare("SELECT k, v FROM kv ORDER BY k")
    }

    static func open(directory: String, mode: SyncMode) throws -> SQLiteEngine {
        var db: OpaquePointer?
        let path = directory + "/kv.sqlite"
        // NOMUTEX: one thread uses the connection, so SQLite's own locking is pure overhead.
        let rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            defer { sqlite3_close(db) }
            throw error(db, rc, "open \(path)")
        }
        let sync = mode == .durable ? "FULL" : "NORMAL"
        let setup = """
            PRAGMA journal_mode=WAL;
            PRAGMA synchronous=\(sync);
            PRAGMA cache_size=-262144;
            CREATE TABLE IF NOT EXISTS kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID;
            """
        let erc = sqlite3_exec(db, setup, nil, nil, nil)
        guard erc == SQLITE_OK else {
            defer { sqlite3_close(db) }
            throw error(db, erc, "setup")
        }
        return try SQLiteEngine(db: db)
    }

    private static func error(_ db: OpaquePointer?, _ rc: Int32, _ what: String) -> BenchError {
        let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        return BenchError("sqlite: \(what): \(message) (\(rc))")
    }

    /// Runs a statement that returns no rows (BEGIN, COMMIT).
    private func run(_ stmt: OpaquePointer) throws {
        let rc = sqlite3_step(stmt)
        sqlite3_reset(stmt)
        guard rc == SQLITE_DONE else { throw Self.error(db, rc, String(cString: sqlite3_sql(stmt))) }
    }

    @inline(__always)
    private func bind(_ stmt: OpaquePointer, _ index: Int32, _ bytes: UnsafeRawBufferPointer) {
        sqlite3_bind_blob(stmt, index, bytes.baseAddress, Int32(bytes.count), Self.staticBytes)
    }

    func put(_ keys: UnsafeBufferPointer<UInt32>, firstOp: Int, data: KVData) throws {
        try run(begin)
        for (j, k) in keys.enumerated() {
            bind(insert, 1, data.key(Int(k)))
            bind(insert, 2, data.value(op: firstOp + j))
            let rc = sqlite3_step(insert)
            sqlite3_reset(insert)
            guard rc == SQLITE_DONE else { throw Self.error(db, rc, "insert") }
        }
        try run(commit)
    }

    func delete(_ keys: UnsafeBufferPointer<UInt32>, data: KVData) throws -> Int {
        try run(begin)
        var found = 0
        for k in keys {
            bind(remove, 1, data.key(Int(k)))
            let rc = sqlite3_step(remove)
            sqlite3_reset(remove)
            guard rc == SQLITE_DONE else { throw Self.error(db, rc, "delete") }
            found += Int(sqlite3_changes(db))
        }
        try run(commit)
        return found
    }

    func get(_ keys: UnsafeBufferPointer<UInt32>, data: KVData) throws -> (found: Int, bytes: Int) {
        try run(beginRead)
        var found = 0, bytes = 0
        for k in keys {
            bind(select, 1, data.key(Int(k)))
            let rc = sqlite3_step(select)
            if rc == SQLITE_ROW {
                // Touch the blob so SQLite really produces it, as a caller would.
                if sqlite3_column_blob(select, 0) != nil { found += 1 }
                bytes += Int(sqlite3_column_bytes(select, 0))
            } else if rc != SQLITE_DONE {
                sqlite3_reset(select)
                throw Self.error(db, rc, "select")
            }
            sqlite3_reset(select)
        }
        try run(commit)
        return (found, bytes)
    }

    func scan() throws -> (count: Int, bytes: Int) {
        try run(beginRead)
        var count = 0, bytes = 0
        while true {
            let rc = sqlite3_step(scanAll)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else {
                sqlite3_reset(scanAll)
                throw Self.error(db, rc, "scan")
            }
            _ = sqlite3_column_blob(scanAll, 0)
            _ = sqlite3_column_blob(scanAll, 1)
            bytes += Int(sqlite3_column_bytes(scanAll, 0)) + Int(sqlite3_column_bytes(scanAll, 1))
            count += 1
        }
        sqlite3_reset(scanAll)
        try run(commit)
        return (count, bytes)
    }

    var syncCount: Int? { nil }

    func close() throws {
        guard let db else { return }
        for stmt in [begin, beginRead, commit, insert, select, remove, scanAll] { sqlite3_finalize(stmt) }
        // The last connection's close checkpoints the WAL into the database and deletes it.
        let rc = sqlite3_close(db)
        self.db = nil
        guard rc == SQLITE_OK else { throw Self.error(nil, rc, "close") }
    }

    deinit { if db != nil { try? close() } }
}
