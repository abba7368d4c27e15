import Foundation

/// Conversions between the numeric kinds that either are exact or do not happen.
enum ExactConversion {
    /// The decimal a finite double means: its shortest round-trip digits (Swift's
    /// `description`), when a decimal holds them and converts back to the same double.
    static func decimal(_ d: Double) -> Decimal? {
        guard d.isFinite else { return nil }
        if d == 0 { return 0 }
        guard let x = Decimal(string: d.description, locale: posix), !x.isNaN, double(x) == d else { return nil }
        return x
    }

    /// The double a decimal equals, when one does (its digits read as a double and back give
    /// the same decimal). Swift's `Double(String)` rounds correctly, unlike
    /// `NSDecimalNumber.doubleValue`.
    static func double(_ x: Decimal) -> Double? {
        guard !x.isNaN, let d = Double(x.description), d.isFinite else { return nil }
        if d == 0 { return x.isZero ? 0 : nil }
        guard let back = Decimal(string: d.description, locale: posix), back == x else { return nil }
        return d
    }

    /// The nearest double to a decimal, rounded once (for averages declared `double`), or `nil`
    /// beyond the double range.
    static func nearestDouble(_ x: Decimal) -> Double? {
        guard !x.isNaN, let d = Double(x.description), d.isFinite else { return nil }
        return d
    }

    /// The integer a whole decimal equals, when it fits 64 bits.
    static func integer(_ x: Decimal) -> Int64? {
        guard !x.isNaN else { return nil }
        var value = x, rounded = Decimal()
        NSDecimalRound(&rounded, &value, 0, .plain)
        guard rounded == x else { return nil }
        return Int64(rounded.description)
    }

    static let posix = Locale(identifier: "en_US_POSIX")
}
