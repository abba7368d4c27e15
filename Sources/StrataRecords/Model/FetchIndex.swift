/// An index over one or more stored or derived attributes, in order: the planner uses it for
/// equality, ranges, `IN`, prefix matches and sorted results.
public struct FetchIndex: Sendable {
    /// The names of the indexed properties, in key order.
    public var properties: [String]
    /// An index over `properties`, in key order.
    public init(_ properties: String...) { self.properties = properties }
    /// The same, from an array (for models built by code).
    public init(_ properties: [String]) { self.properties = properties }
}
