import Foundation

/// An exact decimal of any size: a sign, a magnitude in 64-bit words (little-endian) and a
/// power-of-ten exponent. Sums of decimals that leave 64-bit mantissas accumulate here, so a
/// sum is the same whatever the order of its terms; only the final conversion to `Decimal`
/// can fail (``decimal()``). Sizes stay small: aligning two decimals costs at most 255 digits.
struct WideDecimal {
    private(set) var negative = false
    /// The magnitude's words, least significant first, without zero words at the top (zero is empty).
    private(set) var words: [UInt64] = []
    private(set) var exponent = 0

    init(_ decimal: Decimal) {
        self.init(DecimalCoding.parts(decimal))
    }

    /// The value of `parts` (a decimal's, or a running sum's, ``AggregateArithmetic/DecimalSum``).
    init(_ parts: DecimalCoding.Parts) {
        words = [parts.low, parts.high]
        exponent = parts.exponent
        negative = parts.negative
        trim()
    }

    /// Adds (or subtracts) `other`, exactly.
    mutating func add(_ other: WideDecimal, subtracting: Bool = false) {
        var addend = other
        if subtracting && !addend.words.isEmpty { addend.negative.toggle() }
        if addend.words.isEmpty { return }
        if words.isEmpty {
            self = addend
            return
        }
        if exponent > addend.exponent {
            scale(byPowerOfTen: exponent - addend.exponent)
            exponent = addend.exponent
        } else if addend.exponent > exponent {
            addend.scale(byPowerOfTen: addend.exponent - exponent)
            addend.exponent = exponent
        }
        if negative == addend.negative {
            words = Self.sum(words, addend.words)
        } else if Self.compare(words, addend.words) >= 0 {
            words = Self.difference(words, addend.words)
        } else {
            words = Self.difference(addend.words, words)
            negative = addend.negative
        }
        trim()
    }

    /// The value as a `Decimal` (fewest digits), or an overflow when `Decimal` cannot hold it
    /// exactly: more than a 128-bit mantissa, or an exponent outside −128…127.
    func decimal() throws(AggregateArithmetic.Overflow) -> Decimal {
        if words.isEmpty { return 0 }
        var reduced = self
        while true {
            var candidate = reduced
            guard candidate.divide(by: 10) == 0 else { break }
            reduced = candidate
            reduced.exponent += 1
        }
        while reduced.exponent > 127 {
            var candidate = reduced
            candidate.scale(byPowerOfTen: 1)
            guard candidate.words.count <= 2 else { break }
            reduced = candidate
            reduced.exponent -= 1
        }
        guard reduced.words.count <= 2, reduced.exponent >= -128, reduced.exponent <= 127 else {
            throw AggregateArithmetic.Overflow(reason: "the decimal sum cannot be held exactly by a decimal "
                                               + "(more than 38 digits, or out of its range)")
        }
        return try Self.decimal(DecimalCoding.Parts(negative: reduced.negative, exponent: reduced.exponent,
                                                    low: reduced.words.first ?? 0,
                                                    high: reduced.words.count > 1 ? reduced.words[1] : 0))
    }

    /// The `Decimal` of `parts`, or an overflow where Foundation cannot make it: its initialiser
    /// drops a mantissa's trailing zeros into the exponent, and answers NaN when that takes the
    /// exponent past 127 (10 × 10^127 is 1 × 10^128), which a sum must not return as its value.
    static func decimal(_ parts: DecimalCoding.Parts) throws(AggregateArithmetic.Overflow) -> Decimal {
        let decimal = DecimalCoding.make(parts)
        guard !decimal.isNaN else {
            throw AggregateArithmetic.Overflow(reason: "the decimal sum cannot be held exactly by a decimal "
                                               + "(more than 38 digits, or out of its range)")
        }
        return decimal
    }

    private mutating func trim() {
        while words.last == 0 { words.removeLast() }
        if words.isEmpty { negative = false }
    }

    private mutating func scale(byPowerOfTen power: Int) {
        var remaining = power
        while remaining > 0 {
            let step = min(remaining, 19)
            var factor: UInt64 = 1
            for _ in 0..<step { factor *= 10 }
            multiply(by: factor)
            remaining -= step
        }
    }

    private mutating func multiply(by multiplier: UInt64) {
        var carry: UInt64 = 0
        for i in words.indices {
            let (high, low) = words[i].multipliedFullWidth(by: multiplier)
            let (sum, overflow) = low.addingReportingOverflow(carry)
            words[i] = sum
            carry = high &+ (overflow ? 1 : 0)  // high ≤ multiplier − 1, so no wrap
        }
        if carry != 0 { words.append(carry) }
    }

    /// Divides the magnitude by `divisor` in place; returns the remainder.
    private mutating func divide(by divisor: UInt64) -> UInt64 {
        var remainder: UInt64 = 0
        for i in words.indices.reversed() {
            let (quotient, rest) = divisor.dividingFullWidth((remainder, words[i]))
            words[i] = quotient
            remainder = rest
        }
        trim()
        return remainder
    }

    private static func compare(_ lhs: [UInt64], _ rhs: [UInt64]) -> Int {
        if lhs.count != rhs.count { return lhs.count < rhs.count ? -1 : 1 }
        for i in lhs.indices.reversed() where lhs[i] != rhs[i] { return lhs[i] < rhs[i] ? -1 : 1 }
        return 0
    }

    private static func sum(_ lhs: [UInt64], _ rhs: [UInt64]) -> [UInt64] {
        var out: [UInt64] = []
        out.reserveCapacity(max(lhs.count, rhs.count) + 1)
        var carry = false
        for i in 0..<max(lhs.count, rhs.count) {
            let lhsWord = i < lhs.count ? lhs[i] : 0, rhsWord = i < rhs.count ? rhs[i] : 0
            let (s1, o1) = lhsWord.addingReportingOverflow(rhsWord)
            let (s2, o2) = s1.addingReportingOverflow(carry ? 1 : 0)
            out.append(s2)
            carry = o1 || o2
        }
        if carry { out.append(1) }
        return out
    }

    /// `lhs − rhs` for `lhs ≥ rhs`.
    private static func difference(_ lhs: [UInt64], _ rhs: [UInt64]) -> [UInt64] {
        var out: [UInt64] = []
        out.reserveCapacity(lhs.count)
        var borrow = false
        for i in lhs.indices {
            let subtrahend = i < rhs.count ? rhs[i] : 0
            let (d1, o1) = lhs[i].subtractingReportingOverflow(subtrahend)
            let (d2, o2) = d1.subtractingReportingOverflow(borrow ? 1 : 0)
            out.append(d2)
            borrow = o1 || o2
        }
        return out
    }
}
