import Foundation

/// Conversions between the numeric kinds that either are exact or do not happen.
enum ExactConversion {
    /// The decimal a finite double means: its shortest round-trip digits (Swift's
    /// `description`), when a decimal holds them and converts back to the same double.
    static func decimal(_ value: Double) -> Decimal? {
        guard value.isFinite else { return nil }
        if value == 0 { return 0 }
        guard let result = Decimal(string: value.description, locale: posix), !result.isNaN,
              double(result) == value else { return nil }
        return result
    }

    /// The double a decimal equals, when one does (its digits read as a double and back give
    /// the same decimal). Swift's `Double(String)` rounds correctly, unlike
    /// `NSDecimalNumber.doubleValue`.
    static func double(_ decimal: Decimal) -> Double? {
        guard !decimal.isNaN, let result = Double(decimal.description), result.isFinite else { return nil }
        if result == 0 { return decimal.isZero ? 0 : nil }
        guard let back = Decimal(string: result.description, locale: posix), back == decimal else { return nil }
        return result
    }

    /// The nearest double to a decimal, rounded once (for averages declared `double`), or `nil`
    /// beyond the double range.
    static func nearestDouble(_ decimal: Decimal) -> Double? {
        guard !decimal.isNaN, let result = Double(decimal.description), result.isFinite else { return nil }
        return result
    }

    /// The integer a whole decimal equals, when it fits 64 bits.
    static func integer(_ decimal: Decimal) -> Int64? {
        guard !decimal.isNaN else { return nil }
        var value = decimal, rounded = Decimal()
        NSDecimalRound(&rounded, &value, 0, .plain)
        guard rounded == decimal else { return nil }
        return Int64(rounded.description)
    }

    static let posix = Locale(identifier: "en_US_POSIX")
}
