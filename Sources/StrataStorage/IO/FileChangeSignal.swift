import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wakes a waiter when something in the directory of a store changes (Linux: an inotify watch
/// on the directory, which reports writes to the store file, its lock file and a compaction's
/// rename alike), or when a timeout passes. Elsewhere it only sleeps. Spurious wake-ups are
/// harmless: the waiter looks at the store and waits again.
///
/// Invariant: `descriptor` is the inotify descriptor this object opened (or -1), closed once,
/// in `deinit`; `wait` only polls and drains it.
final class FileChangeSignal: @unchecked Sendable {
    private let descriptor: Int32

    init(path: String) {
        #if os(Linux)
        let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        let fd = inotify_init1(Int32(IN_NONBLOCK) | Int32(IN_CLOEXEC))
        if fd >= 0 {
            let mask = UInt32(IN_MODIFY) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_CREATE)
            if inotify_add_watch(fd, directory.isEmpty ? "/" : directory, mask) < 0 {
                closeDescriptor(fd)
                descriptor = -1
                return
            }
        }
        descriptor = fd
        #else
        descriptor = -1
        #endif
    }

    deinit { if descriptor >= 0 { closeDescriptor(descriptor) } }

    /// Returns after a change in the directory or after `timeout`, whichever comes first,
    /// without blocking a thread of the cooperative pool.
    func wait(upTo timeout: Duration) async {
        guard descriptor >= 0 else {
            try? await Task.sleep(for: timeout)
            return
        }
        let fd = descriptor
        let milliseconds = Int32(clamping: max(1, timeout.wholeMicroseconds / 1000))
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&entry, 1, milliseconds)
                // Drain what arrived: the next wait should sleep until something new.
                var buffer = [UInt8](repeating: 0, count: 4096)
                while buffer.withUnsafeMutableBytes({ readDescriptor(fd, $0.baseAddress, $0.count) }) > 0 {}
                continuation.resume()
            }
        }
    }
}
