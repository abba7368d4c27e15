/// A position in a store's persistent history: the token of one recorded transaction. Tokens
/// grow with every recorded commit and are never reused, so a consumer keeps the token of the
/// last transaction it handled and asks for what came after it.
public struct HistoryToken: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The token's number: 1 for the first recorded transaction, then one more for each.
    public let value: UInt64

    /// The token numbered `value`, as a consumer saved it (``value``).
    public init(_ value: UInt64) { self.value = value }

    /// The position before every recorded transaction: the history after it is all of it.
    public static let start = HistoryToken(0)

    public static func < (lhs: HistoryToken, rhs: HistoryToken) -> Bool { lhs.value < rhs.value }

    /// The token's number, for logs and command lines.
    public var description: String { String(value) }
}
