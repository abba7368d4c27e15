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
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.pending.append(notification)
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// The saves posted since the last call, oldest first.
    func take() -> [SaveNotification] {
        state.withLock { s in
            defer { s.pending = [] }
            return s.pending
        }
    }

    /// Whether the mailbox was finished: no save is to be waited for any more.
    var isFinished: Bool { state.withLock { $0.finished } }

    /// Ends waiting, now and for good (the task was cancelled, or the container closed).
    func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.finished = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Returns when a save is waiting, or the mailbox is finished.
    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { s -> Bool in
                    if !s.pending.isEmpty || s.finished { return true }
                    s.waiter = c
                    return false
                }
                if ready { c.resume() }
            }
        } onCancel: {
            finish()
        }
    }
}

/// One live change sequence of a context: its mailbox registered with the container, and
/// the context taking in other contexts' saves while the sequence lives (so the objects it
/// yields show saved values). Released with the sequence's iterator.
final class ChangeSequenceLease {
    let context: ModelContext
    let mailbox = SaveMailbox()
    private let observer: UInt64

    init(_ context: ModelContext) {
        self.context = context
        let mailbox = self.mailbox
        observer = context.container.addSaveObserver { [weak mailbox] n in mailbox?.post(n) }
        context.container.register(mailbox)
        context.liveChangeSequences += 1
        context.updateMergeAttachment()
    }

    deinit {
        context.container.removeSaveObserver(observer)
        context.container.unregister(mailbox)
        context.liveChangeSequences -= 1
        context.updateMergeAttachment()
    }

    /// Waits for the next saves, skipping those committed at or before `seen` (a fetch made
    /// after them already shows them). Nil: the task was cancelled or the container closed
    /// (saves posted before the close are dropped: nothing can be fetched any more).
    func nextSaves(after seen: UInt64, isolation: isolated (any Actor)? = #isolation) async -> [SaveNotification]? {
        while !Task.isCancelled && !mailbox.isFinished {
            let saves = mailbox.take().filter { $0.transactionID > seen }
            if !saves.isEmpty { return saves }
            await mailbox.wait()
        }
        return nil
    }
}
