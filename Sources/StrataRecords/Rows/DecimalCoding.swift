import Foundation

/// Decimals in rows as sign, exponent and an integer mantissa (FORMAT.md §12): exact, and
/// about thirty times cheaper than the decimal text `Decimal.description` produces.
///
/// Foundation keeps a decimal as `NSDecimal`: a 32-bit header (exponent in the first byte,
/// length in the high nibble of the second, the sign in its bit 3) and eight 16-bit mantissa
/// words. Reading those bytes is the fast path; it is taken only when a probe value decodes as
/// expected at startup, else the portable (slow) path through the text is used.
enum DecimalCoding {
    struct Parts: Equatable {
        var negative: Bool
        var exponent: Int
        var low: UInt64
        var high: UInt64
    }

    static let layoutIsKnown: Bool = {
        guard MemoryLayout<Decimal>.size == 20,
              let probe = Decimal(string: "-12.345", locale: Locale(identifier: "en_US_POSIX")) else { return false }
        return fastParts(probe) == Parts(negative: true, exponent: -3, low: 12345, high: 0)
    }()

    static func fastParts(_ decimal: Decimal) -> Parts {
        withUnsafeBytes(of: decimal) { bytes in
            var low: UInt64 = 0, high: UInt64 = 0
            let length = Int(bytes[1] >> 4)
            for i in 0..<min(length, 8) {
                let word = UInt64(bytes[4 + 2 * i]) | UInt64(bytes[5 + 2 * i]) << 8
                if i < 4 { low |= word << (16 * UInt64(i)) } else { high |= word << (16 * UInt64(i - 4)) }
            }
            return Parts(negative: bytes[1] & 0x08 != 0, exponent: Int(Int8(bitPattern: bytes[0])),
                         low: low, high: high)
        }
    }

    static func parts(_ decimal: Decimal) -> Parts {
        if layoutIsKnown { return fastParts(decimal) }
        // Portable: the significand's digits, multiplied into 128 bits.
        var low: UInt64 = 0, high: UInt64 = 0
        for digit in decimal.significand.magnitude.description.utf8 where digit >= 48 && digit <= 57 {
            let (carried, shifted) = low.multipliedFullWidth(by: 10)
            high = high &* 10 &+ carried
            let (sum, carry) = shifted.addingReportingOverflow(UInt64(digit - 48))
            low = sum
            if carry { high &+= 1 }
        }
        return Parts(negative: decimal < 0, exponent: Int(decimal.exponent), low: low, high: high)
    }

    static func make(_ parts: Parts) -> Decimal {
        var significand = Decimal(parts.low)
        if parts.high != 0 {
            let twoTo64 = Decimal(UInt64(1) << 32) * Decimal(UInt64(1) << 32)
            significand += Decimal(parts.high) * Decimal(sign: .plus, exponent: 0, significand: twoTo64)
        }
        return Decimal(sign: parts.negative ? .minus : .plus, exponent: parts.exponent, significand: significand)
    }

    /// The order of two decimals (−1, 0, 1) from their mantissas and exponents, or `nil` when
    /// this cannot tell cheaply (a mantissa beyond 64 bits, a zero or NaN, exponents more than
    /// 19 apart, or the layout unknown): the caller asks Foundation, whose `<` and `==` each
    /// normalise both sides by multiplication — most of what a scan comparing a decimal
    /// column with a constant spent per row.
    static func fastCompare(_ lhs: Decimal, _ rhs: Decimal) -> Int? {
        guard layoutIsKnown else { return nil }
        let left = fastParts(lhs), right = fastParts(rhs)
        guard left.high == 0, right.high == 0, left.low != 0, right.low != 0 else { return nil }
        if left.negative != right.negative { return left.negative ? -1 : 1 }
        let gap = left.exponent - right.exponent
        guard abs(gap) <= 19 else { return nil }
        var power: UInt64 = 1
        for _ in 0..<abs(gap) { power &*= 10 }
        // The magnitudes at the smaller exponent; one that overflows 64 bits is the larger.
        var order: Int
        if gap >= 0 {
            let (scaled, overflow) = left.low.multipliedReportingOverflow(by: power)
            order = overflow ? 1 : (scaled < right.low ? -1 : (scaled == right.low ? 0 : 1))
        } else {
            let (scaled, overflow) = right.low.multipliedReportingOverflow(by: power)
            order = overflow ? -1 : (left.low < scaled ? -1 : (left.low == scaled ? 0 : 1))
        }
        if left.negative { order = -order }
        return order
    }

    /// `lhs + rhs`, or `lhs − rhs`, exactly, in 64-bit integers: both mantissas aligned to the smaller
    /// exponent. `nil` when that could overflow (or the layout is unknown): the caller uses
    /// Foundation's arithmetic, which costs far more (a running `@sum` pays it per change;
    /// decision 13).
    static func fastSum(_ lhs: Decimal, _ rhs: Decimal, subtracting: Bool) -> Decimal? {
        guard layoutIsKnown else { return nil }
        let lhsParts = fastParts(lhs), rhsParts = fastParts(rhs)
        guard lhsParts.high == 0, rhsParts.high == 0,
              abs(lhsParts.exponent - rhsParts.exponent) <= 18 else { return nil }
        var lhsMantissa = lhsParts.low, rhsMantissa = rhsParts.low
        let exponent = min(lhsParts.exponent, rhsParts.exponent)
        let lhsScale = lhsParts.exponent - exponent, rhsScale = rhsParts.exponent - exponent
        var power: UInt64 = 1
        for _ in 0..<max(lhsScale, rhsScale) { power *= 10 }
        if lhsScale > 0 {
            let (scaled, overflow) = lhsMantissa.multipliedReportingOverflow(by: power)
            guard !overflow else { return nil }
            lhsMantissa = scaled
        }
        if rhsScale > 0 {
            let (scaled, overflow) = rhsMantissa.multipliedReportingOverflow(by: power)
            guard !overflow else { return nil }
            rhsMantissa = scaled
        }
        let lhsNegative = lhsParts.negative, rhsNegative = rhsParts.negative != subtracting
        let negative: Bool, magnitude: UInt64
        if lhsNegative == rhsNegative {
            let (sum, overflow) = lhsMantissa.addingReportingOverflow(rhsMantissa)
            guard !overflow else { return nil }
            (negative, magnitude) = (lhsNegative, sum)
        } else if lhsMantissa >= rhsMantissa {
            (negative, magnitude) = (lhsNegative, lhsMantissa - rhsMantissa)
        } else {
            (negative, magnitude) = (rhsNegative, rhsMantissa - lhsMantissa)
        }
        return make(Parts(negative: negative && magnitude != 0, exponent: exponent, low: magnitude, high: 0))
    }

    /// `u8 sign (0 or 1)`, `i8 exponent`, `u8 n`, then the mantissa's `n` low bytes, little-endian.
    static func append(_ decimal: Decimal, to out: inout [UInt8]) {
        let components = parts(decimal)
        out.append(components.negative ? 1 : 0)
        out.append(UInt8(bitPattern: Int8(clamping: components.exponent)))
        // The length first, then the bytes straight into `out`: a scratch array for them cost an
        // allocation per decimal written, which every row write paid (decision 60).
        let significantBits = components.high != 0
            ? 128 - components.high.leadingZeroBitCount : 64 - components.low.leadingZeroBitCount
        let length = (significantBits + 7) / 8
        out.append(UInt8(length))
        var lo = components.low, hi = components.high
        for _ in 0..<length {
            out.append(UInt8(truncatingIfNeeded: lo))
            lo = lo >> 8 | (hi & 0xFF) << 56
            hi >>= 8
        }
    }

    static func decode<Bytes: Collection<UInt8>>(sign: UInt8, exponent: UInt8, mantissa: Bytes) -> Decimal? {
        guard sign <= 1, mantissa.count <= 16 else { return nil }
        var low: UInt64 = 0, high: UInt64 = 0
        for (i, byte) in mantissa.enumerated() {
            if i < 8 { low |= UInt64(byte) << (8 * UInt64(i)) } else { high |= UInt64(byte) << (8 * UInt64(i - 8)) }
        }
        return make(Parts(negative: sign == 1, exponent: Int(Int8(bitPattern: exponent)), low: low, high: high))
    }
}
