/// What ``FileSystem/lockState(_:)`` found.
public enum FileLockState: Sendable, Equatable {
    /// Nobody holds an exclusive lock on the file.
    case unlocked
    /// Someone holds an exclusive lock; `pid` is the process that took it, when the system
    /// names it.
    case lockedExclusively(pid: Int32?)
    /// The file system cannot tell.
    case unknown
}
