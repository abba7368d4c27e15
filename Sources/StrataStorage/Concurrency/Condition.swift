#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex with a condition variable (pthreads), for the two places that must block a thread:
/// waiting for the writer gate and waiting for a group-commit `fdatasync`.
///
/// Invariant: `mutex` and `cond` are initialised in `init`, destroyed in `deinit`, and never
/// moved (they live in heap memory this object owns).
final class Condition: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        cond = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        cond.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    /// Requires the lock; releases it while waiting.
    func wait() { pthread_cond_wait(cond, mutex) }
    func broadcast() { pthread_cond_broadcast(cond) }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
