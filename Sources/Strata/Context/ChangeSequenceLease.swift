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
        observer = context.container.addSaveObserver { [weak mailbox] notification in mailbox?.post(notification) }
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
