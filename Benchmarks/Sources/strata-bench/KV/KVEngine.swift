/// How an engine is asked to make commits durable.
enum SyncMode: String, Sendable {
    /// Bulk work: commits need not be durable when they return (Strata `.normal`, SQLite WAL +
    /// `synchronous=NORMAL`, LMDB `MDB_NOSYNC`). Close still leaves the data durable.
    case relaxed
    /// Every commit is durable when it returns (Strata `.full`, SQLite WAL + `synchronous=FULL`,
    /// LMDB default flags).
    case durable
}

/// What a workload needs from a key-value store. Each method is one transaction and loops over
/// a whole batch itself, so the per-operation path is the engine's own specialised code and the
/// harness adds no dynamic dispatch per key.
///
/// Keys are given as indices into a shared `KVData`; engines borrow the bytes from there.
protocol KVEngine: AnyObject {
    /// The name used on the command line and in reports.
    static var name: String { get }
    /// One line describing how the engine is configured, for the report header.
    static var configuration: String { get }

    /// Opens (creating if missing) the engine's store in `directory`.
    static func open(directory: String, mode: SyncMode) throws -> Self

    /// Puts `keys[j] → data.value(op: firstOp + j)` for every `j`, in one write transaction.
    func put(_ keys: UnsafeBufferPointer<UInt32>, firstOp: Int, data: KVData) throws

    /// Deletes every key in one write transaction; returns how many existed.
    func delete(_ keys: UnsafeBufferPointer<UInt32>, data: KVData) throws -> Int

    /// Looks every key up in one read transaction; returns how many were found and the sum of
    /// their value lengths (so the reads are observable and cannot be optimised away).
    func get(_ keys: UnsafeBufferPointer<UInt32>, data: KVData) throws -> (found: Int, bytes: Int)

    /// Scans every entry in key order in one read transaction; returns the entry count and the
    /// sum of key and value lengths.
    func scan() throws -> (count: Int, bytes: Int)

    /// The engine's own count of `fsync`/`fdatasync` calls, where it keeps one (Strata only).
    var syncCount: Int? { get }

    /// Closes the store; its files are complete and durable afterwards.
    func close() throws

    /// Verifies the closed store in `directory` with the engine's own consistency check, or
    /// returns nil if the benchmark has none for this engine (only Strata's is run).
    static func checkStore(directory: String) -> StoreCheck?
}

extension KVEngine {
    static func checkStore(directory: String) -> StoreCheck? { nil }
}
