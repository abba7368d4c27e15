import Synchronization

/// Whether a transaction, and every tree handle and cursor made from it, may still be used.
///
/// One per transaction, shared by its handles (they hold it, not the transaction's state), so
/// a handle kept past its transaction's end finds out with one atomic load and throws
/// ``StrataError/transactionEnded(_:)`` instead of reading or writing state that is gone.
///
/// States move `active → failed → ended` or `active → ended`, never back. The state is atomic
/// because a snapshot may be closed on one thread while another uses it; a write transaction
/// changes it only on its own thread. `cause` is written before `failed` is stored (release)
/// and read only after `failed` was loaded (acquire).
final class HandleLifetime: Sendable {
    enum State: UInt8 {
        case active, failed, committed, rolledBack, closed
    }

    private let raw = Atomic<UInt8>(State.active.rawValue)
    private let failure = Mutex<StrataError?>(nil)

    init() {}

    var state: State { State(rawValue: raw.load(ordering: .acquiring)) ?? .closed }

    @inline(__always) var isActive: Bool { raw.load(ordering: .acquiring) == State.active.rawValue }

    /// Throws unless the transaction is active: the check every handle method starts with.
    @inline(__always) func check() throws {
        let state = raw.load(ordering: .acquiring)
        if _slowPath(state != State.active.rawValue) { throw error(for: state) }
    }

    @inline(never)
    private func error(for rawState: UInt8) -> StrataError {
        switch State(rawValue: rawState) ?? .closed {
        case .active: return .transactionEnded(.closed) // not reached: `check` tests for it
        case .failed: return .transactionFailed(cause: cause ?? .transactionEnded(.rolledBack))
        case .committed: return .transactionEnded(.committed)
        case .rolledBack: return .transactionEnded(.rolledBack)
        case .closed: return .transactionEnded(.closed)
        }
    }

    /// The error that failed the transaction, if one did.
    var cause: StrataError? { failure.withLock { $0 } }

    /// Marks an active transaction failed (a later failure keeps the first cause). Returns the
    /// error its operations throw from now on.
    @discardableResult
    func fail(_ error: StrataError) -> StrataError {
        let cause = failure.withLock { stored -> StrataError in
            if let first = stored { return first }
            stored = error
            return error
        }
        _ = raw.compareExchange(expected: State.active.rawValue, desired: State.failed.rawValue,
                                ordering: .acquiringAndReleasing)
        return .transactionFailed(cause: cause)
    }

    /// Ends the transaction; the first end wins.
    func end(_ how: TransactionEnd) {
        let ended: State
        switch how {
        case .committed: ended = .committed
        case .rolledBack: ended = .rolledBack
        case .closed: ended = .closed
        }
        var current = raw.load(ordering: .acquiring)
        while current == State.active.rawValue || current == State.failed.rawValue {
            let (exchanged, original) = raw.compareExchange(expected: current, desired: ended.rawValue,
                                                            ordering: .acquiringAndReleasing)
            if exchanged { return }
            current = original
        }
    }
}
