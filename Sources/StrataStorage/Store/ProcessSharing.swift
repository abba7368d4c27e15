/// Whether other processes may write the store while this handle has it open
/// (``StoreOptions/sharing``; docs/decisions.md, decision 61).
public enum ProcessSharing: Sendable, Equatable {
    /// This handle takes the write lock when it opens and keeps it until it closes: another
    /// process can open the store read-only, and its writable open fails with
    /// ``StrataError/locked(path:)``. Nothing is checked per transaction: the fastest mode, and
    /// the default.
    case exclusive
    /// Several processes open the store read-write. The write lock is taken for each write
    /// transaction (and checkpoint, compaction, close), waiting up to `lockTimeout` for another
    /// process's transaction to end before throwing ``StrataError/locked(path:)``. Each write
    /// transaction and each snapshot starts from the newest commit of any process; snapshots
    /// already open keep what they see. A read-only open of a shared store follows the
    /// writers the same way (a read-only open of an exclusive one sees the state it opened).
    case shared(lockTimeout: Duration)

    /// Sharing with a lock timeout of five seconds.
    public static let shared = ProcessSharing.shared(lockTimeout: .seconds(5))

    /// How long a write waits for another process's transaction, `nil` when exclusive.
    var lockTimeout: Duration? {
        if case .shared(let timeout) = self { return timeout }
        return nil
    }
}
