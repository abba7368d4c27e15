import Foundation

/// A right-side value with the row-independent work done: its string folded, and for `LIKE`
/// and `MATCHES` its pattern compiled.
struct PreparedOperand: Sendable {
    enum Pattern: Sendable {
        case like(LikePattern)
        case regex(NSRegularExpression)
    }

    let value: PreparedValue
    let pattern: Pattern?
}

/// A value with its string, if it is one, prepared for a comparison's ``TextMode``: done
/// once for a constant side, once per row for the other.
struct PreparedValue: Sendable {
    let value: StoredValue
    let text: String?

    init(_ value: StoredValue, mode: TextMode) {
        self.value = value
        if case .string(let string) = value { text = mode.prepare(string) } else { text = nil }
    }
}

/// The right side of a comparison, ready to test against.
enum PreparedRight: Sendable {
    case one(PreparedOperand)
    case many([PreparedOperand], MembershipIndex?)

    /// True when `test` holds for the value, or for some value of a list or to-many path.
    @inline(__always)
    func contains(where test: (PreparedOperand) throws -> Bool) rethrows -> Bool {
        switch self {
        case .one(let operand): return try test(operand)
        case .many(let operands, _): return try operands.contains(where: test)
        }
    }
}
