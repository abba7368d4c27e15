/// The bounds a post-crash state must fall in, as of the moment of the crash.
final class CrashProgress: @unchecked Sendable {
    /// Every state up to this index must survive (acknowledged `full` commits; `normal`
    /// commits once a checkpoint, compaction or close synced them).
    var low = 0
    /// No state beyond this one can exist (the commit in flight, if any).
    var high = 0
}
