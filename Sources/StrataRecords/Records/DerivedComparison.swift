/// Whether a derived value agrees with a recomputation by other means (the tests' references,
/// SQLite): exactly, except the sums and averages of doubles, which may differ in the last
/// bits (by at most 1e-9 of the magnitude).
enum DerivedComparison {
    static func agree(_ a: StoredValue, _ b: StoredValue, tolerant: Bool = true) -> Bool {
        if a == b { return true }
        if tolerant, case .double(let x) = a, case .double(let y) = b {
            return abs(x - y) <= 1e-9 * max(abs(x), abs(y), 1e-300) || abs(x - y) < 1e-12
        }
        if tolerant, case .decimal(let x) = a, case .decimal(let y) = b,
           let dx = ExactConversion.nearestDouble(x), let dy = ExactConversion.nearestDouble(y) {
            return abs(dx - dy) <= 1e-9 * max(abs(dx), abs(dy), 1e-300) || abs(dx - dy) < 1e-12
        }
        return false
    }

    /// Whether `d` is a sum or average over doubles: the one inexact aggregate.
    static func isInexact(_ d: ResolvedDerivedAttribute) -> Bool {
        guard case .aggregate(let f, _, _) = d.parsed, f == .sum || f == .avg else { return false }
        return d.aggregateSourceType == .double
    }
}
