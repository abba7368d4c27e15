/// One notification of a property observer.
public struct ObservedChange<Value> {
    /// When the observer is told.
    public let kind: ObservedChangeKind
    /// The value the observer last saw (nil for `.initial`).
    public let oldValue: Value?
    /// The value now (nil for `.willChange`).
    public let newValue: Value?
}
