import Synchronization

/// Saves announced to a context that merges automatically, waiting for it to take them in
/// its own isolation domain.
final class SaveInbox: Sendable {
    private let pending = Mutex<[SaveNotification]>([])
    private let count = Atomic<Int>(0)

    func post(_ notification: SaveNotification) {
        pending.withLock { $0.append(notification) }
        count.add(1, ordering: .releasing)
    }

    func take() -> [SaveNotification] {
        guard count.load(ordering: .acquiring) > 0 else { return [] }
        return pending.withLock { posted in
            let out = posted
            posted = []
            count.store(0, ordering: .releasing)
            return out
        }
    }
}
