/// A uniqueness constraint over one or more stored attributes (or to-one relationships).
public struct Unique: Sendable {
    /// The names of the constrained properties: no two objects may have equal values for all of them
    /// (checked at commit, `StrataError.conflict`).
    public var properties: [String]
    /// A uniqueness constraint over `properties`.
    public init(_ properties: String...) { self.properties = properties }
    /// The same, from an array (for models built by code).
    public init(_ properties: [String]) { self.properties = properties }
}
