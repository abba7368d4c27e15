#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Several processes writing one store (``ProcessSharing/shared(lockTimeout:)``; docs/decisions.md,
/// decision 61). The write lock is taken per write transaction; whoever takes it first brings its
/// trees up to the newest commit of any process by replaying, as recovery does, the frames other
/// processes appended after the end of the log it knows. Pages are immutable by offset, so its
/// page cache stays valid; a checkpoint another process wrote is adopted by rebuilding from it,
/// and a compaction (a new file renamed over the path) by opening the new file.
extension Store {
    // MARK: The writer's section

    /// Takes the writer gate and, for a shared store, the write lock (waiting up to the
    /// timeout), and catches up with other processes' commits. Balanced by ``unlockWriter()``.
    func lockWriter() throws {
        gate.lock()
        do {
            try enterSharedSection()
        } catch {
            gate.unlock()
            throw error
        }
    }

    /// ``lockWriter()`` from `async` code: neither wait blocks a thread of the cooperative pool.
    func lockWriterAsync() async throws {
        await gate.lockAsync()
        do {
            guard let timeout = options.sharing.lockTimeout, !isReadOnly else { return }
            var backoff = LockBackoff(timeout: timeout)
            while !(try takeWriteLockOnce()) {
                guard let pause = backoff.nextPause() else { throw StrataError.locked(path: Store.lockPath(for: path)) }
                try? await Task.sleep(for: pause)
            }
            try catchUpHoldingLock()
        } catch {
            writeLock?.unlock()
            writeLock = nil
            gate.unlock()
            throw error
        }
    }

    /// Releases what ``lockWriter()`` took.
    func unlockWriter() {
        if options.sharing != .exclusive, !isReadOnly {
            writeLock?.unlock()
            writeLock = nil
        }
        gate.unlock()
    }

    /// Requires the gate. Takes the write lock (waiting up to the timeout) and catches up.
    private func enterSharedSection() throws {
        guard let timeout = options.sharing.lockTimeout, !isReadOnly else { return }
        writeLock = try Store.takeWriteLock(Store.lockPath(for: path), timeout: timeout, fs: fs)
        do {
            try catchUpHoldingLock()
        } catch {
            writeLock?.unlock()
            writeLock = nil
            throw error
        }
    }

    /// The write lock at `lockPath`: at once, or (`timeout` set: a shared store) trying again
    /// with growing pauses until `timeout` passes.
    static func takeWriteLock(_ lockPath: String, timeout: Duration?, fs: any FileSystem) throws -> any FileLock {
        guard let timeout else { return try fs.lockExclusive(lockPath) }
        var backoff = LockBackoff(timeout: timeout)
        while true {
            do {
                return try fs.lockExclusive(lockPath)
            } catch StrataError.locked {
                guard let pause = backoff.nextPause() else { throw StrataError.locked(path: lockPath) }
                usleep(UInt32(pause.wholeMicroseconds))
            }
        }
    }

    /// One non-blocking try for the write lock; false when another process holds it.
    func takeWriteLockOnce() throws -> Bool {
        do {
            writeLock = try fs.lockExclusive(Store.lockPath(for: path))
            return true
        } catch StrataError.locked {
            return false
        }
    }

    /// Requires the gate and the write lock: catches up, then cuts whatever another process
    /// left after the log (its preallocated zeros, or a frame it died writing). Bytes that are
    /// not zeros are judged first as recovery judges a torn tail (FORMAT.md §8 step 4): if a
    /// valid frame after them says they had been synced, the file is corrupt and nothing is cut.
    func catchUpHoldingLock() throws {
        if shared.withLock({ $0.isClosed }) { return }
        try catchUp(holdingWriteLock: true)
        // After catching up: adopting another process's compaction replaces the log.
        let log = try writableLog()
        let size = try log.file.size()
        let clean = try bytesAreZero(at: log.end, size: size)
        guard size != log.allocatedEnd || !clean else { return }
        if !clean {
            let (onDisk, _, _) = try Recovery.readHeader(file: log.file, path: path, options: options)
            try Recovery.checkTail(reader: FrameReader(file: log.file), header: onDisk,
                                   end: Recovery.LogEnd(offset: log.end, reason: .invalidFrame), size: size,
                                   readOnly: false)
        }
        try log.cutTail()
    }

    /// Whether the file holds only zeros in the 16 bytes at `offset` (nothing has been written
    /// there since this handle preallocated it).
    private func bytesAreZero(at offset: UInt64, size: UInt64) throws -> Bool {
        guard offset < size else { return true }
        var bytes = [UInt8](repeating: 0, count: 16)
        let n = try bytes.withUnsafeMutableBytes { try writableLog().file.read(into: $0, at: offset) }
        return !bytes[..<n].contains { $0 != 0 }
    }
}

/// The pauses between tries for the write lock: 100 µs, doubling up to 10 ms, until the timeout.
struct LockBackoff {
    private let deadline: ContinuousClock.Instant
    private var pause = Duration.microseconds(100)

    init(timeout: Duration) { deadline = .now + timeout }

    /// The pause before the next try, `nil` once the timeout has passed.
    mutating func nextPause() -> Duration? {
        guard ContinuousClock.now < deadline else { return nil }
        defer { pause = min(pause * 2, .milliseconds(10)) }
        return pause
    }
}

extension Duration {
    /// Whole microseconds, at least 1 (for `usleep` and `poll`).
    var wholeMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        return max(1, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
    }
}
