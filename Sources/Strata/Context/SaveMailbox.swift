import Synchronization

/// Saves of a container waiting for one change sequence (``FetchResults``, ``ObjectUpdates``)
/// to take them. The container's save observer posts from the saving thread; the sequence
/// takes them in its own isolation domain. At most one task waits at a time (a sequence's
/// iterator is not shared). Finished when the task is cancelled or the container closes.
final class SaveMailbox: Sendable {
    private struct State {
        var pending: [SaveNotification] = []
        var waiter: CheckedContinuation<Void, Never>?
        var finished = false
    }

    private let state = Mutex(State())

    func post(_ notification: SaveNotification) {
        let waiter = state.withLock { locked -> CheckedContinuation<Void, Never>? in
            locked.pending.append(notification)
            defer { locked.waiter = nil }
            return locked.waiter
        }
        waiter?.resume()
    }

    /// The saves posted since the last call, oldest first.
    func take() -> [SaveNotification] {
        state.withLock { locked in
            defer { locked.pending = [] }
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
