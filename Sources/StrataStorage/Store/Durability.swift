/// When a commit returns relative to `fdatasync` (SQLite's `synchronous`).
public enum Durability: Sendable, Equatable {
    /// Every commit returns only after its commit frame is durable (one `fdatasync`, shared
    /// by concurrent committers: group commit).
    case full
    /// Commits return once written; a timer syncs every ``StoreOptions/syncIntervalMilliseconds``, and
    /// checkpoints and close sync. A crash can lose the last commits, never consistency.
    case normal
}
