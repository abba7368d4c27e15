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

    /// The order of two decimals (−1, 0, 1) from their mantissas and exponents
    /// (``Number/order(_:_:)``), or `nil` when this cannot tell cheaply (a mantissa beyond 64
    /// bits, a NaN, or the layout unknown): the caller asks Foundation, whose `<` and `==` each
    /// normalise both sides by multiplication — most of what a scan comparing a decimal column
    /// with a constant spent per row.
    static func fastCompare(_ lhs: Decimal, _ rhs: Decimal) -> Int? {
        guard layoutIsKnown else { return nil }
        let left = fastParts(lhs), right = fastParts(rhs)
        // A NaN has no mantissa and the sign bit set.
        guard left.high == 0, right.high == 0, !(left.negative && left.low == 0),
              !(right.negative && right.low == 0) else { return nil }
        return Number.order(Number(negative: left.negative, exponent: left.exponent, magnitude: left.low),
                            Number(negative: right.negative, exponent: right.exponent, magnitude: right.low))
    }

    /// A number as sign, power of ten and magnitude: an int's is its value at exponent 0.
    struct Number: Sendable {
        var negative: Bool
        var exponent: Int
        var magnitude: UInt64

        init(negative: Bool, exponent: Int, magnitude: UInt64) {
            self.negative = negative && magnitude != 0
            self.exponent = exponent
            self.magnitude = magnitude
        }

        init(_ integer: Int64) {
            self.init(negative: integer < 0, exponent: 0, magnitude: integer.magnitude)
        }

        /// The exact order of two numbers (−1, 0, 1). With the magnitudes brought to the
        /// smaller exponent in 128 bits: a gap of more than 19 makes the scaled side at least
        /// 10^20, beyond any 64-bit magnitude.
        @inline(__always)
        static func order(_ lhs: Number, _ rhs: Number) -> Int {
            let lhsSign = lhs.magnitude == 0 ? 0 : (lhs.negative ? -1 : 1)
            let rhsSign = rhs.magnitude == 0 ? 0 : (rhs.negative ? -1 : 1)
            if lhsSign != rhsSign { return lhsSign < rhsSign ? -1 : 1 }
            if lhsSign == 0 { return 0 }
            let gap = lhs.exponent - rhs.exponent
            let magnitudeOrder: Int
            if gap >= 0 {
                magnitudeOrder = gap > 19 ? 1 : scaledOrder(lhs.magnitude, gap, rhs.magnitude)
            } else {
                magnitudeOrder = -gap > 19 ? -1 : -scaledOrder(rhs.magnitude, -gap, lhs.magnitude)
            }
            return lhsSign < 0 ? -magnitudeOrder : magnitudeOrder
        }

        /// The order of `magnitude` × 10^`power` (`power` ≤ 19) and `other`.
        @inline(__always)
        private static func scaledOrder(_ magnitude: UInt64, _ power: Int, _ other: UInt64) -> Int {
            let (high, low) = magnitude.multipliedFullWidth(by: powersOfTen[power])
            if high != 0 { return 1 }
            return low < other ? -1 : (low == other ? 0 : 1)
        }

        /// 10^0 … 10^19: every power of ten a `UInt64` holds.
        static let powersOfTen: [UInt64] = (0...19).map { power in
            (0..<power).reduce(1 as UInt64) { product, _ in product * 10 }
        }
    }

    /// `lhs + rhs`, or `lhs − rhs`, exactly, in 64-bit integers: both mantissas aligned to the smaller
    /// exponent. `nil` when that could overflow (or the layout is unknown): the caller uses
    /// Foundation's arithmetic, which costs far more (a running `@sum` pays it per change;
    /// decision 13).
    static func fastSum(_ lhs: Decimal, _ rhs: Decimal, subtracting: Bool) -> Decimal? {
        guard layoutIsKnown else { return nil }
        return fastSum(fastParts(lhs), fastParts(rhs), subtracting: subtracting).map(make)
    }

    /// ``fastSum(_:_:subtracting:)`` on the parts of two decimals (both from ``parts(_:)``):
    /// the parts of the result, `nil` where a 64-bit mantissa could not hold it.
    static func fastSum(_ lhsParts: Parts, _ rhsParts: Parts, subtracting: Bool) -> Parts? {
        guard lhsParts.high == 0, rhsParts.high == 0,
              abs(lhsParts.exponent - rhsParts.exponent) <= 18 else { return nil }
        var lhsMantissa = lhsParts.low, rhsMantissa = rhsParts.low
        let exponent = min(lhsParts.exponent, rhsParts.exponent)
        let lhsScale = lhsParts.exponent - exponent, rhsScale = rhsParts.exponent - exponent
        let power = Number.powersOfTen[max(lhsScale, rhsScale)]
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
        return Parts(negative: negative && magnitude != 0, exponent: exponent, low: magnitude, high: 0)
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

    /// Whether ``decode(sign:exponent:mantissa:)`` takes a decimal of this sign byte and mantissa
    /// length (what a walk of stored rows checks without decoding).
    @inline(__always)
    static func decodes(sign: UInt8, mantissaLength: Int) -> Bool { sign <= 1 && mantissaLength <= 16 }

    static func decode<Bytes: Collection<UInt8>>(sign: UInt8, exponent: UInt8, mantissa: Bytes) -> Decimal? {
        guard decodes(sign: sign, mantissaLength: mantissa.count) else { return nil }
        var low: UInt64 = 0, high: UInt64 = 0
        for (i, byte) in mantissa.enumerated() {
            if i < 8 { low |= UInt64(byte) << (8 * UInt64(i)) } else { high |= UInt64(byte) << (8 * UInt64(i - 8)) }
        }
        return make(Parts(negative: sign == 1, exponent: Int(Int8(bitPattern: exponent)), low: low, high: high))
    }
}
