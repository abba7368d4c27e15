/// The right side of a comparison, ready to test against.
enum PreparedRight: Sendable {
    case one(PreparedOperand)
    case many([PreparedOperand], MembershipIndex?)

    /// True when `test` holds for the value, or for some value of a list or to-many path.
    @inline(__always)
    func contains(where test: (PreparedOperand) throws -> Bool) rethrows -> Bool {
        switch self {
        case .one(let x): return try test(x)
        case .many(let xs, _): return try xs.contains(where: test)
        }
    }
}
