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
