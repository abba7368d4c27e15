/// When a property observer is told.
public enum ObservedChangeKind: Sendable, Equatable {
    /// At registration, with ``ObservingOptions/initial``.
    case initial
    /// Before a change, with ``ObservingOptions/prior``: `oldValue` only.
    case willChange
    /// After a change: both values.
    case didChange
}
