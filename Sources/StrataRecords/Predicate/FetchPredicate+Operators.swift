extension FetchPredicate {
    /// Both hold. `a && b && c` makes one `AND` of three, as the format string `a AND b AND c` does.
    public static func && (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate {
        if case .and(let terms) = lhs, terms.count >= 2 { return .and(terms + [rhs]) }
        return .and([lhs, rhs])
    }

    /// Either holds. `a || b || c` makes one `OR` of three.
    public static func || (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate {
        if case .or(let terms) = lhs, terms.count >= 2 { return .or(terms + [rhs]) }
        return .or([lhs, rhs])
    }

    /// The predicate does not hold.
    public static prefix func ! (operand: FetchPredicate) -> FetchPredicate { .not(operand) }
}
