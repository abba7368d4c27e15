import Synchronization

/// Saves of a container waiting for their reader to take them in its own isolation domain:
/// a context that merges automatically (which only takes), or a change sequence
/// (``FetchResults``, ``ObjectUpdates``, which also waits). The container's save observer posts
/// from the saving thread. At most one task waits at a time (a sequence's iterator is not
/// shared). Finished when the waiting task is cancelled or the container closes.
final class SaveMailbox: Sendable {
    private struct State {
        var pending: [SaveNotification] = []
        var waiter: CheckedContinuation<Void, Never>?
        var finished = false
    }

    private let state = Mutex(State())
    /// How many saves are pending, read without the lock: a context asks on every operation,
    /// and nearly always finds none.
    private let pendingCount = Atomic<Int>(0)

    func post(_ notification: SaveNotification) {
        let waiter = state.withLock { locked -> CheckedContinuation<Void, Never>? in
            locked.pending.append(notification)
            pendingCount.store(locked.pending.count, ordering: .releasing)
            defer { locked.waiter = nil }
            return locked.waiter
        }
        waiter?.resume()
    }

    /// The saves posted since the last call, oldest first.
    func take() -> [SaveNotification] {
        guard pendingCount.load(ordering: .acquiring) > 0 else { return [] }
        return state.withLock { locked in
            defer {
                locked.pending = []
                pendingCount.store(0, ordering: .releasing)
            }
            return locked.pending
        }
    }

    /// Whether the mailbox was finished: no save is to be waited for any more.
    var isFinished: Bool { state.withLock { $0.finished } }

    /// Ends waiting, now and for good (the task was cancelled, or the container closed).
    func finish() {
        let waiter = state.withLock { locked -> CheckedContinuation<Void, Never>? in
            locked.finished = true
            defer { locked.waiter = nil }
            return locked.waiter
        }
        waiter?.resume()
    }

    /// Returns when a save is waiting, or the mailbox is finished.
    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { locked -> Bool in
                    if !locked.pending.isEmpty || locked.finished { return true }
                    locked.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            finish()
        }
    }
}
