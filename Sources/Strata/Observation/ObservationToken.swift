/// Keeps an observation alive: it ends when the token is cancelled or released.
public final class ObservationToken {
    private var onCancel: (() -> Void)?

    init(_ onCancel: @escaping () -> Void) { self.onCancel = onCancel }

    /// Ends the observation (once; later calls do nothing).
    public func cancel() {
        let handler = onCancel
        onCancel = nil
        handler?()
    }

    deinit { cancel() }
}
