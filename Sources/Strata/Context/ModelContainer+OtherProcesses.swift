import StrataRecords
import StrataStorage

/// A container on a store that other processes write too (`StoreOptions.sharing`): their
/// commits, which the store takes in at each transaction and snapshot, are read from the
/// persistent history and announced like saves of this process's contexts — merged by contexts
/// that merge automatically (rows read again from the store), told to save observers with
/// ``SaveNotification/isFromAnotherProcess`` set, and yielded by change sequences.
extension ModelContainer {
    /// Registers the store observer that notes other processes' commits, and the history
    /// position from which they are announced.
    func startFollowingOtherProcesses() throws {
        let token = store.addOtherProcessCommitObserver { [weak self] range in
            self?.otherProcessCommits.withLock { $0.append(range) }
        }
        otherProcessObserver.withLock { $0 = token }
        let start = try store.lastHistoryToken()
        otherProcessDelivery.withLock { $0 = start }
    }

    /// Change sequences wake when another process commits, not only at this process's next
    /// transaction: a task waits for the store's file to change and announces what came.
    func startWatchingOtherProcesses() {
        otherProcessWatcher.withLock { watcher in
            guard watcher == nil, !isClosed else { return }
            let store = self.store
            watcher = Task.detached { [weak self] in
                var seen = store.lastCommitID
                while !Task.isCancelled {
                    guard let next = try? await store.waitForCommit(after: seen, timeout: .seconds(1)) else {
                        if self == nil || (self?.isClosed ?? true) { return }
                        continue
                    }
                    seen = next
                    guard let container = self, !container.isClosed else { return }
                    container.deliverOtherProcessCommits()
                }
            }
        }
    }

    /// Takes in other processes' newest commits (without waiting for a writer of this process)
    /// and announces those no context has been told of. Every context operation that takes in
    /// merges calls it first.
    ///
    /// The history is read from one snapshot, after the ranges noted so far are taken: a range
    /// the snapshot does not reach (a writer of this process caught up meanwhile) goes back for
    /// the next call; one it reaches without a history entry (history off then) is a commit
    /// whose changes are unknown.
    func deliverOtherProcessCommits() {
        guard isShared, !isClosed else { return }
        _ = try? store.refreshWithoutWaiting()
        guard !otherProcessCommits.withLock({ $0.isEmpty }) else { return }
        let notifications = otherProcessDelivery.withLock { cursor -> [SaveNotification] in
            let ranges = otherProcessCommits.withLock { taken in defer { taken = [] }; return taken }
            guard !ranges.isEmpty else { return [] }
            var found: [SaveNotification] = []
            var later: [ClosedRange<UInt64>] = []
            do {
                let snapshot = try store.snapshot()
                defer { snapshot.close() }
                let reader = snapshot.reader
                let reach = snapshot.transactionID
                for range in ranges where range.upperBound > reach {
                    later.append(max(range.lowerBound, reach + 1)...range.upperBound)
                }
                let reached = ranges.compactMap { range -> ClosedRange<UInt64>? in
                    range.lowerBound <= reach ? range.lowerBound...min(range.upperBound, reach) : nil
                }
                guard !reached.isEmpty else {
                    otherProcessCommits.withLock { $0 = later + $0 }
                    return []
                }
                var announced = 0
                if try reader.isRecordingHistory() {
                    while true {
                        let page = try reader.history(after: cursor, limit: 256)
                        for transaction in page
                        where reached.contains(where: { $0.contains(transaction.transactionID) }) {
                            found.append(SaveNotification(changes: RecordChanges(transaction), container: self,
                                                          isFromAnotherProcess: true))
                            announced += 1
                        }
                        guard let last = page.last else { break }
                        cursor = last.token
                        if page.count < 256 { break }
                    }
                }
                let commits = reached.reduce(0) { $0 + $1.count }
                if announced < commits {
                    // Commits without a history entry (made while it was off, or a purge): what they
                    // changed is unknown.
                    found.append(unknownChanges(upTo: reached.map(\.upperBound).max()!))
                }
            } catch StrataError.historyPurged {
                // The history this container had not read is gone: what changed is unknown.
                cursor = (try? store.lastHistoryToken()) ?? cursor
                found = [unknownChanges(upTo: ranges.map(\.upperBound).max()!)]
            } catch {
                // Read again at the next operation.
                otherProcessCommits.withLock { $0 = ranges + $0 }
                return []
            }
            otherProcessCommits.withLock { $0 = later + $0 }
            return found
        }
        for notification in notifications { announce(notification, from: nil) }
    }

    private func unknownChanges(upTo transactionID: UInt64) -> SaveNotification {
        SaveNotification(changes: RecordChanges(transactionID: transactionID), container: self,
                         isFromAnotherProcess: true, changesAreUnknown: true)
    }

    /// Waits until another process commits to the store (`StoreOptions.sharing` set to
    /// `shared`), announces its commits (``SaveNotification/isFromAnotherProcess``) and returns
    /// true; false when `timeout` passes first, the task is cancelled, or the container does not
    /// share its store. A program that only reads (a widget, a daemon) calls it in a loop and
    /// fetches again after each return, or lets its contexts merge automatically.
    ///
    /// Throws `StrataError.misuse` when the container is closed, and what catching up throws.
    public func waitForOtherProcessCommits(timeout: Duration? = nil) async throws -> Bool {
        try requireOpen("waitForOtherProcessCommits")
        guard isShared else { return false }
        let deadline = timeout.map { ContinuousClock.now + $0 }
        var seen = store.lastCommitID
        while !Task.isCancelled {
            let left = deadline.map { $0 - ContinuousClock.now }
            if let left, left <= .zero { return false }
            guard let next = try await store.waitForCommit(after: seen, timeout: left) else { return false }
            seen = next
            let before = otherProcessDelivery.withLock { $0 }
            let noted = !otherProcessCommits.withLock { $0.isEmpty }
            deliverOtherProcessCommits()
            if noted || otherProcessDelivery.withLock({ $0 }) != before { return true }
        }
        return false
    }
}
