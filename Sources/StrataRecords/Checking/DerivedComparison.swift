/// Whether a derived value agrees with a recomputation by other means (the tests' references,
/// SQLite): exactly, except the sums and averages of doubles, which may differ in the last
/// bits (by at most 1e-9 of the magnitude).
enum DerivedComparison {
    static func agree(_ lhs: StoredValue, _ rhs: StoredValue, tolerant: Bool = true) -> Bool {
        if lhs == rhs { return true }
        if tolerant, case .double(let left) = lhs, case .double(let right) = rhs {
            return abs(left - right) <= 1e-9 * max(abs(left), abs(right), 1e-300) || abs(left - right) < 1e-12
        }
        if tolerant, case .decimal(let left) = lhs, case .decimal(let right) = rhs,
           let leftDouble = ExactConversion.nearestDouble(left),
           let rightDouble = ExactConversion.nearestDouble(right) {
            return abs(leftDouble - rightDouble) <= 1e-9 * max(abs(leftDouble), abs(rightDouble), 1e-300)
                || abs(leftDouble - rightDouble) < 1e-12
        }
        return false
    }

    /// Whether `derived` is a sum or average over doubles: the one inexact aggregate.
    static func isInexact(_ derived: ResolvedDerivedAttribute) -> Bool {
        guard case .aggregate(let function, _, _) = derived.parsed, function == .sum || function == .avg else {
            return false
        }
        return derived.aggregateSourceType == .double
    }
}
