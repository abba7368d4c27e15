/// Options of ``ModelObject/observe(_:options:changeHandler:)``.
public struct ObservingOptions: OptionSet, Sendable {
    public let rawValue: UInt8
    /// Creates options from their raw bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Tell the handler once at once, with the current value (kind `.initial`).
    public static let initial = ObservingOptions(rawValue: 1)
    /// Tell the handler before a change too (kind `.willChange`, with the old value).
    public static let prior = ObservingOptions(rawValue: 2)
}
