import CLMDB

/// The LMDB baseline: the system's liblmdb, one unnamed database in a single file
/// (`MDB_NOSUBDIR`), a 4 GiB map.
final class LMDBEngine: KVEngine {
    static let name = "lmdb"
    static var configuration: String {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        _ = mdb_version(&major, &minor, &patch)
        return "lmdb \(major).\(minor).\(patch): MDB_NOSUBDIR, map 4 GiB, MDB_NOSYNC (fills) / "
            + "default flags (fillsync); close = mdb_env_sync(force) + mdb_env_close"
    }

    private var env: OpaquePointer?
    private var dbi: MDB_dbi = 0

    private init(env: OpaquePointer) { self.env = env }

    private static func check(_ rc: Int32, _ what: String) throws {
        guard rc == 0 else { throw BenchError("lmdb: \(what): \(String(cString: mdb_strerror(rc))) (\(rc))") }
    }

    static func open(directory: String, mode: SyncMode) throws -> LMDBEngine {
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "env_create")
        guard let env else { throw BenchError("lmdb: env_create returned no environment") }
        let engine = LMDBEngine(env: env)
        try check(mdb_env_set_mapsize(env, 4 << 30), "set_mapsize")
        var flags = UInt32(MDB_NOSUBDIR)
        if mode == .relaxed { flags |= UInt32(MDB_NOSYNC) }
        try check(mdb_env_open(env, directory + "/kv.mdb", flags, 0o644), "env_open")
        // Open the unnamed database once; the handle stays valid for the environment's life.
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "txn_begin")
        let rc = mdb_dbi_open(txn, nil, 0, &engine.dbi)
        guard rc == 0 else {
            mdb_txn_abort(txn)
            try check(rc, "dbi_open")
            return engine
        }
        try check(mdb_txn_commit(txn), "txn_commit")
        return engine
    }

    @inline(__always)
    private static func val(_ bytes: UnsafeRawBufferPointer) -> MDB_val {
        // LMDB takes non-const pointers but only reads keys and values given to put/get/del.
        MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
    }

    /// Runs `body` in a write transaction, committing if it returns and aborting if it throws.
    private func write<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, 0, &txn), "txn_begin")
        guard let txn else { throw BenchError("lmdb: no transaction") }
        let result: T
        do { result = try body(txn) } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try Self.check(mdb_txn_commit(txn), "txn_commit")
        return result
    }

    /// Runs `body` in a read-only transaction (one snapshot).
    private func read<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "txn_begin(read)")
        guard let txn else { throw BenchError("lmdb: no transaction") }
        defer { mdb_txn_abort(txn) }
        return try body(txn)
    }

    func put(_ keys: UnsafeBufferPointer<UInt32>, firstOp: Int, data: KVData) throws {
        try write { txn in
            for (j, k) in keys.enumerated() {
                var key = Self.val(data.key(Int(k)))
                var value = Self.val(data.value(op: firstOp + j))
                try Self.check(mdb_put(txn, dbi, &key, &value, 0), "put")
            }
        }
    }

    func delete(_ keys: UnsafeBufferPointer<UInt32>, data: KVData) throws -> Int {
        try write { txn in
            var found = 0
            for k in keys {
                var key = Self.val(data.key(Int(k)))
                let rc = mdb_del(txn, dbi, &key, nil)
                if rc == 0 { found += 1 } else if rc != MDB_NOTFOUND { try Self.check(rc, "del") }
            }
            return found
        }
    }

    func get(_ keys: UnsafeBufferPointer<UInt32>, data: KVData) throws -> (found: Int, bytes: Int) {
        try read { txn in
            var found = 0, bytes = 0
            var value = MDB_val()
            for k in keys {
                var key = Self.val(data.key(Int(k)))
                let rc = mdb_get(txn, dbi, &key, &value)
                if rc == 0 {
                    found += 1
                    bytes += value.mv_size
                } else if rc != MDB_NOTFOUND {
                    try Self.check(rc, "get")
                }
            }
            return (found, bytes)
        }
    }

    func scan() throws -> (count: Int, bytes: Int) {
        try read { txn in
            var cursor: OpaquePointer?
            try Self.check(mdb_cursor_open(txn, dbi, &cursor), "cursor_open")
            defer { mdb_cursor_close(cursor) }
            var key = MDB_val(), value = MDB_val()
            var count = 0, bytes = 0
            var rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
            while rc == 0 {
                count += 1
                bytes += key.mv_size + value.mv_size
                rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
            }
            if rc != MDB_NOTFOUND { try Self.check(rc, "cursor_get") }
            return (count, bytes)
        }
    }

    var syncCount: Int? { nil }

    func close() throws {
        guard let env else { return }
        // With MDB_NOSYNC nothing has been flushed yet; the other engines' closes leave their
        // data durable, so LMDB's close does too, and its cost is counted in close_ms.
        let rc = mdb_env_sync(env, 1)
        mdb_env_close(env)
        self.env = nil
        try Self.check(rc, "env_sync")
    }

    deinit { if env != nil { try? close() } }
}
