/// One sort key: a key path (an attribute, a derived attribute, or through to-one relationships)
/// and a direction. Values sort as ``StoredValue/compare(_:_:)`` orders them, which is the order of
/// their index keys: `nil` first, NaN after every number, strings by the Unicode scalars of
/// their NFC forms. Objects that tie on every sort key come in primary-key order.
public struct FetchSortDescriptor: Hashable, Sendable {
    /// The dotted key path to sort by, such as `name` or `list.name`.
    public var keyPath: String
    /// Whether smaller values come first.
    public var ascending: Bool

    /// Sorts by `keyPath`, smallest value first unless `ascending` is `false`.
    public init(_ keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }
}
