/// A held advisory lock; released by `unlock()` or when the object is deallocated.
public protocol FileLock: AnyObject, Sendable {
    /// Releases the lock; calling it again does nothing.
    func unlock()
}
