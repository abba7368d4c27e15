/// Learning of commits: observers of other processes' commits, and waiting for the next commit
/// of anyone (decision 61).
extension Store {
    /// Calls `observer` each time this handle takes in commits of other processes, with the
    /// range of their transaction ids, on the thread that caught up and while the store's
    /// writer gate is held: it must not read or write the store (post the range somewhere and
    /// return). Returns a token for ``removeOtherProcessCommitObserver(_:)``.
    @discardableResult
    public func addOtherProcessCommitObserver(_ observer: @escaping @Sendable (ClosedRange<UInt64>) -> Void)
        -> UInt64 {
        sharingObservers.withLock { state in
            let token = state.next
            state.next += 1
            state.observers[token] = observer
            return token
        }
    }

    /// Stops calling the observer `token` names.
    public func removeOtherProcessCommitObserver(_ token: UInt64) {
        sharingObservers.withLock { _ = $0.observers.removeValue(forKey: token) }
    }

    func announceOtherProcessCommits(after txid: UInt64) {
        let now = currentVersion.txid
        guard now > txid else { return }
        let observers = sharingObservers.withLock { Array($0.observers.values) }
        for observer in observers { observer((txid + 1)...now) }
    }

    // MARK: Waiting

    /// Returns the id of the newest commit once it is after `transactionID` — a commit of this
    /// process or, for a shared store, of any — or `nil` when `timeout` passes first. Woken by
    /// changes to the file (inotify on Linux), with a poll every 100 ms as a backstop and
    /// elsewhere. Throws what catching up throws (``refresh(waitingForWriter:)``), and
    /// ``StrataError/closed(_:)`` once the store is closed; returns `nil` when the task is cancelled.
    public func waitForCommit(after transactionID: UInt64, timeout: Duration? = nil) async throws -> UInt64? {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        let signal = FileChangeSignal(path: path)
        while !Task.isCancelled {
            if shared.withLock({ $0.isClosed }) { throw StrataError.closed("store") }
            try refresh(waitingForWriter: false)
            let now = lastCommittedTransactionID
            if now > transactionID { return now }
            var wait = Duration.milliseconds(100)
            if let deadline {
                let left = deadline - ContinuousClock.now
                if left <= .zero { return nil }
                wait = min(wait, left)
            }
            if options.sharing == .exclusive {
                try? await Task.sleep(for: min(wait, .milliseconds(5)))
            } else {
                await signal.wait(upTo: wait)
            }
        }
        return nil
    }
}
