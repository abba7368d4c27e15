/// How a transaction ended, in ``StrataError/transactionEnded(_:)``.
public enum TransactionEnd: Sendable, Equatable, CustomStringConvertible {
    /// The write transaction committed: its `write` closure returned and the commit succeeded.
    case committed
    /// The write transaction was rolled back: its closure threw or called
    /// ``WriteTransaction/rollback()``, an operation failed it, or its commit failed.
    case rolledBack
    /// The snapshot was closed: ``ReadTransaction/close()``, or its `read` closure returned.
    case closed

    /// `committed`, `rolled back` or `closed`.
    public var description: String {
        switch self {
        case .committed: return "committed"
        case .rolledBack: return "rolled back"
        case .closed: return "closed"
        }
    }
}
