import Synchronization

/// Saves announced to a context that merges automatically, waiting for it to take them in
/// its own isolation domain.
final class SaveInbox: Sendable {
    private let pending = Mutex<[SaveNotification]>([])
    private let count = Atomic<Int>(0)

    func post(_ n: SaveNotification) {
        pending.withLock { $0.append(n) }
        count.add(1, ordering: .releasing)
    }

    func take() -> [SaveNotification] {
        guard count.load(ordering: .acquiring) > 0 else { return [] }
        return pending.withLock { p in
            let out = p
            p = []
            count.store(0, ordering: .releasing)
            return out
        }
    }
}
