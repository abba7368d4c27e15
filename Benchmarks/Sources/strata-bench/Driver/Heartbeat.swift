import Dispatch
import Foundation
import Synchronization

/// Keeps a running child from looking like a hang: passes the child's stderr on to ours and,
/// when nothing has been written for ``silence`` seconds, logs that the child is still running
/// and for how long.
final class Heartbeat: Sendable {
    /// Seconds without a line before the heartbeat speaks (the child's own progress lines come
    /// every ``ProgressMeter/interval`` seconds, so it speaks only in untimed phases).
    static let silence = 15.0

    private let label: String
    private let started = Measure.now()
    /// When the last line was written, and whether the child has finished.
    private let state = Mutex<(lastOutput: UInt64, stopped: Bool)>((Measure.now(), false))
    private let stopSignal = DispatchSemaphore(value: 0)

    init(label: String) { self.label = label }

    /// Copies everything `handle` yields to our stderr, on a thread of its own, until end of
    /// file; the returned semaphore is signalled then.
    func forward(_ handle: FileHandle) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                FileHandle.standardError.write(data)
                state.withLock { $0.lastOutput = Measure.now() }
            }
            done.signal()
        }
        return done
    }

    /// Starts watching for silence, on a thread of its own, until ``stop()``.
    func start() {
        Thread.detachNewThread { [self] in
            while stopSignal.wait(timeout: .now() + 1) == .timedOut {
                let now = Measure.now()
                let quiet = state.withLock { s -> Bool in
                    guard !s.stopped, Double(now - s.lastOutput) / 1e9 >= Self.silence else { return false }
                    s.lastOutput = now
                    return true
                }
                if quiet { log("  … \(label): still running (\(RateFormat.duration(Double(now - started) / 1e9)))") }
            }
        }
    }

    /// Stops the watch: the child has exited.
    func stop() {
        state.withLock { $0.stopped = true }
        stopSignal.signal()
    }
}
