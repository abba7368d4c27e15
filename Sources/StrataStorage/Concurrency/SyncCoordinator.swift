/// Group commit: committers that need their frames durable share `fdatasync` calls.
///
/// A committer records how far it wrote (`noteWritten`), releases the writer gate, then calls
/// `waitDurable(upTo:)`. If no sync is running it becomes the leader: it syncs everything written
/// so far, for itself and for every committer that wrote meanwhile; otherwise it waits for the
/// running sync and checks again. One failed sync poisons the store for good (a failed `fsync`
/// cannot be retried: the kernel may have dropped the dirty pages): every waiter, and every
/// later writer, gets ``StrataError/poisoned(cause:)`` with the sync's error.
final class SyncCoordinator: @unchecked Sendable {
    private let condition = Condition()
    // Guarded by `condition`.
    private var written: UInt64
    private var durable: UInt64
    private var syncing = false
    private var failure: StrataError?
    private(set) var syncCount = 0

    init(durableEnd: UInt64) {
        written = durableEnd
        durable = durableEnd
    }

    var durableEnd: UInt64 { condition.withLock { durable } }
    var failed: StrataError? { condition.withLock { failure } }
    var syncs: Int { condition.withLock { syncCount } }
    var hasUnsyncedWrites: Bool { condition.withLock { written > durable } }

    func noteWritten(_ end: UInt64) { condition.withLock { if end > written { written = end } } }

    /// Poisons the store with `error`, a failed sync made outside `waitDurable` (the directory
    /// sync of a compaction, a header sync).
    func fail(_ error: StrataError) {
        condition.withLock { if failure == nil { failure = error } }
        condition.withLock { condition.broadcast() }
    }

    /// Returns once every byte before `target` is durable, syncing `file` if needed.
    func waitDurable(upTo target: UInt64, file: any StorageFile) throws {
        condition.lock()
        defer { condition.unlock() }
        while durable < target {
            if let failure { throw StrataError.poisoned(cause: failure) }
            if syncing {
                condition.wait()
                continue
            }
            syncing = true
            let goal = written
            condition.unlock()
            var error: StrataError?
            do { try file.sync() } catch let syncError as StrataError { error = syncError } catch let other {
                error = .ioFailure(operation: "sync (\(other))", path: "", errno: 5)
            }
            condition.lock()
            syncing = false
            syncCount += 1
            if let error {
                if failure == nil { failure = error }
                condition.broadcast()
                throw StrataError.poisoned(cause: failure ?? error)
            }
            if goal > durable { durable = goal }
            condition.broadcast()
        }
        if let failure, durable < target { throw StrataError.poisoned(cause: failure) }
    }

    /// Syncs everything written so far (checkpoints, close, the `normal`-mode timer).
    func syncAll(file: any StorageFile) throws {
        let target = condition.withLock { written }
        try waitDurable(upTo: target, file: file)
    }
}
