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

    init(_ d: Decimal) {
        let p = DecimalCoding.parts(d)
        words = [p.low, p.high]
        exponent = p.exponent
        negative = p.negative
        trim()
    }

    /// Adds (or subtracts) `other`, exactly.
    mutating func add(_ other: WideDecimal, subtracting: Bool = false) {
        var o = other
        if subtracting && !o.words.isEmpty { o.negative.toggle() }
        if o.words.isEmpty { return }
        if words.isEmpty {
            self = o
            return
        }
        if exponent > o.exponent {
            scale(byPowerOfTen: exponent - o.exponent)
            exponent = o.exponent
        } else if o.exponent > exponent {
            o.scale(byPowerOfTen: o.exponent - exponent)
            o.exponent = exponent
        }
        if negative == o.negative {
            words = Self.sum(words, o.words)
        } else if Self.compare(words, o.words) >= 0 {
            words = Self.difference(words, o.words)
        } else {
            words = Self.difference(o.words, words)
            negative = o.negative
        }
        trim()
    }

    /// The value as a `Decimal` (fewest digits), or an overflow when `Decimal` cannot hold it
    /// exactly: more than a 128-bit mantissa, or an exponent outside −128…127.
    func decimal() throws(AggregateArithmetic.Overflow) -> Decimal {
        if words.isEmpty { return 0 }
        var m = self
        while true {
            var t = m
            guard t.divide(by: 10) == 0 else { break }
            m = t
            m.exponent += 1
        }
        while m.exponent > 127 {
            var t = m
            t.scale(byPowerOfTen: 1)
            guard t.words.count <= 2 else { break }
            m = t
            m.exponent -= 1
        }
        guard m.words.count <= 2, m.exponent >= -128, m.exponent <= 127 else {
            throw AggregateArithmetic.Overflow(reason: "the decimal sum cannot be held exactly by a decimal (more than 38 digits, or out of its range)")
        }
        return DecimalCoding.make(DecimalCoding.Parts(negative: m.negative, exponent: m.exponent,
                                                      low: m.words.first ?? 0, high: m.words.count > 1 ? m.words[1] : 0))
    }

    private mutating func trim() {
        while words.last == 0 { words.removeLast() }
        if words.isEmpty { negative = false }
    }

    private mutating func scale(byPowerOfTen k: Int) {
        var k = k
        while k > 0 {
            let step = min(k, 19)
            var factor: UInt64 = 1
            for _ in 0..<step { factor *= 10 }
            multiply(by: factor)
            k -= step
        }
    }

    private mutating func multiply(by m: UInt64) {
        var carry: UInt64 = 0
        for i in words.indices {
            let (high, low) = words[i].multipliedFullWidth(by: m)
            let (sum, overflow) = low.addingReportingOverflow(carry)
            words[i] = sum
            carry = high &+ (overflow ? 1 : 0)  // high ≤ m − 1, so no wrap
        }
        if carry != 0 { words.append(carry) }
    }

    /// Divides the magnitude by `d` in place; returns the remainder.
    private mutating func divide(by d: UInt64) -> UInt64 {
        var remainder: UInt64 = 0
        for i in words.indices.reversed() {
            let (q, r) = d.dividingFullWidth((remainder, words[i]))
            words[i] = q
            remainder = r
        }
        trim()
        return remainder
    }

    private static func compare(_ a: [UInt64], _ b: [UInt64]) -> Int {
        if a.count != b.count { return a.count < b.count ? -1 : 1 }
        for i in a.indices.reversed() where a[i] != b[i] { return a[i] < b[i] ? -1 : 1 }
        return 0
    }

    private static func sum(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] {
        var out: [UInt64] = []
        out.reserveCapacity(max(a.count, b.count) + 1)
        var carry = false
        for i in 0..<max(a.count, b.count) {
            let x = i < a.count ? a[i] : 0, y = i < b.count ? b[i] : 0
            let (s1, o1) = x.addingReportingOverflow(y)
            let (s2, o2) = s1.addingReportingOverflow(carry ? 1 : 0)
            out.append(s2)
            carry = o1 || o2
        }
        if carry { out.append(1) }
        return out
    }

    /// `a − b` for `a ≥ b`.
    private static func difference(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] {
        var out: [UInt64] = []
        out.reserveCapacity(a.count)
        var borrow = false
        for i in a.indices {
            let y = i < b.count ? b[i] : 0
            let (d1, o1) = a[i].subtractingReportingOverflow(y)
            let (d2, o2) = d1.subtractingReportingOverflow(borrow ? 1 : 0)
            out.append(d2)
            borrow = o1 || o2
        }
        return out
    }
}
