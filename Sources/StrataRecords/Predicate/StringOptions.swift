/// String comparison options: `[c]` case-insensitive, `[d]` diacritic-insensitive,
/// `[n]` normalized (compare the NFC forms' bytes, the fast path).
///
/// `[c]` and `[d]` fold both sides as ``TextFolding/fold(_:caseInsensitive:diacriticInsensitive:)``
/// does, locale-independently (`canonical:` is the `[cd]` folding). `[n]` supersedes both, as in
/// Core Data.
public struct StringOptions: OptionSet, Hashable, Sendable {
    /// The option bits.
    public let rawValue: UInt8
    /// Options from their bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// `[c]`: ignore case (full case folding).
    public static let caseInsensitive = StringOptions(rawValue: 1)
    /// `[d]`: ignore diacritics.
    public static let diacriticInsensitive = StringOptions(rawValue: 2)
    /// `[n]`: compare the bytes of both sides' NFC forms, without folding and without
    /// grapheme awareness: for text already in NFC that is its bytes as given (Core Data's
    /// meaning, for text it calls normalized), and for other text still what an index gives.
    public static let normalized = StringOptions(rawValue: 4)
}
