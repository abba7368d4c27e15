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
