/// How far a double running sum (sum + compensation, kept in auxiliary fields) may lie from
/// the compensated sum of the same values from scratch: the tolerance of docs/decisions.md
/// ("Aggregate arithmetic"), 1e-9 of the magnitude, or 1e-12 absolutely.
///
/// Both are Neumaier sums, the running one in another order and with the values that left
/// subtracted. Each step's rounding error is kept in the compensation, but the compensation's
/// own additions round too, by a few units of roundoff of the largest values the parent ever
/// held: a parent that held 1e15 and keeps 1e-15 may be off by 1e-18 (measured by
/// `RecordCheckerTests`), far more than any bound relative to what it holds now. The magnitude
/// is the largest of the values' total magnitude, the running sum and its compensation (a
/// damaged field far from the truth stays far outside a bound taken relative to itself); the
/// absolute floor covers the residue of values that left. Damage below the bound is also
/// below what the derived value's comparisons could ever notice.
enum RunningSumTolerance {
    static let relative = 1e-9
    static let absolute = 1e-12

    static func agree(sum: Double, compensation: Double, scratch: Double, magnitude: Double) -> Bool {
        let difference = abs((sum + compensation) - scratch)
        return difference < absolute
            || difference <= relative * max(magnitude, abs(sum), abs(compensation), abs(scratch))
    }
}
