import StrataStorage

/// The engine under test: one Strata store file (plus its `.lock`) holding one tree, "kv".
/// Default options except durability, so the numbers are what an application gets.
final class StrataEngine: KVEngine {
    static let name = "strata"
    static var configuration: String {
        let o = StoreOptions()
        return "strata: durability .normal (fills; synced every \(o.syncIntervalMilliseconds) ms) / .full (fillsync), "
            + "defaults otherwise (page \(o.pageSize) B, cache \(o.cacheBytes >> 20) MiB, compact on close at "
            + "\(Int(o.compactOnCloseGarbageRatio * 100))% garbage)"
    }
    static let treeName = "kv"

    private let store: Store

    private init(store: Store) { self.store = store }

    static func open(directory: String, mode: SyncMode) throws -> StrataEngine {
        let options = StoreOptions(durability: mode == .durable ? .full : .normal)
        return StrataEngine(store: try Store(path: directory + "/kv.strata", options: options))
    }

    func put(_ keys: UnsafeBufferPointer<UInt32>, firstOp: Int, data: KVData) throws {
        try store.write { tx in
            guard let tree = try tx.tree(Self.treeName, createIfMissing: true) else {
                throw BenchError("strata: tree \(Self.treeName) not created")
            }
            for (j, k) in keys.enumerated() {
                try tree.put(data.key(Int(k)).bytes, data.value(op: firstOp + j).bytes)
            }
        }
    }

    func delete(_ keys: UnsafeBufferPointer<UInt32>, data: KVData) throws -> Int {
        try store.write { tx in
            guard let tree = try tx.tree(Self.treeName) else { return 0 }
            var found = 0
            for k in keys where try tree.delete(data.key(Int(k)).bytes) { found += 1 }
            return found
        }
    }

    func get(_ keys: UnsafeBufferPointer<UInt32>, data: KVData) throws -> (found: Int, bytes: Int) {
        try store.read { tx in
            guard let tree = try tx.tree(Self.treeName) else { return (0, 0) }
            var found = 0, bytes = 0
            for k in keys {
                // Borrowed, zero-copy: the same access SQLite's column_blob and LMDB's get give.
                if let n = try tree.withValue(forKey: data.key(Int(k)).bytes, { $0.byteCount }) {
                    found += 1
                    bytes += n
                }
            }
            return (found, bytes)
        }
    }

    func scan() throws -> (count: Int, bytes: Int) {
        try store.read { tx in
            guard let tree = try tx.tree(Self.treeName) else { return (0, 0) }
            let cursor = tree.makeCursor()
            var count = 0, bytes = 0
            var ok = try cursor.first()
            while ok {
                count += 1
                bytes += cursor.key.count + cursor.value.count
                ok = try cursor.next()
            }
            return (count, bytes)
        }
    }

    var syncCount: Int? { store.statistics.syncCount }

    func close() throws { try store.close() }

    /// Reopens the closed store read-only and runs `Store.check()` (frame checksums, key order,
    /// page reachability, counts, live/dead bytes). An open or check that throws is a problem.
    static func checkStore(directory: String) -> StoreCheck? {
        do {
            var options = StoreOptions()
            options.readOnly = true
            let store = try Store(path: directory + "/kv.strata", options: options)
            let report: CheckReport
            do { report = try store.check() } catch {
                try? store.close()
                throw error
            }
            try store.close()
            return StoreCheck(problems: report.problems)
        } catch {
            return StoreCheck(problems: ["check could not run: \(error)"])
        }
    }
}
