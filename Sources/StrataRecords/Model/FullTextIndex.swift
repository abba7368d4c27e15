/// A word index over string attributes (stored or derived): every word of their values, folded
/// as `canonical:` folds (case, diacritics, NFC), kept by the commit that changes them, at a
/// cost proportional to the words that changed. ``RecordReader/search(_:)`` answers a
/// ``TextSearch`` through it. The bytes: FORMAT.md §12, "Word indexes".
public struct FullTextIndex: Sendable {
    /// The names of the indexed properties: string attributes or derived attributes.
    public var properties: [String]
    /// A word index over `properties`.
    public init(_ properties: String...) { self.properties = properties }
    /// The same, from an array (for models built by code).
    public init(_ properties: [String]) { self.properties = properties }
}
