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
        guard MemoryLayout<Decimal>.size == 20, let probe = Decimal(string: "-12.345", locale: Locale(identifier: "en_US_POSIX")) else { return false }
        return fastParts(probe) == Parts(negative: true, exponent: -3, low: 12345, high: 0)
    }()

    static func fastParts(_ d: Decimal) -> Parts {
        withUnsafeBytes(of: d) { b in
            var low: UInt64 = 0, high: UInt64 = 0
            let length = Int(b[1] >> 4)
            for w in 0..<min(length, 8) {
                let word = UInt64(b[4 + 2 * w]) | UInt64(b[5 + 2 * w]) << 8
                if w < 4 { low |= word << (16 * UInt64(w)) } else { high |= word << (16 * UInt64(w - 4)) }
            }
            return Parts(negative: b[1] & 0x08 != 0, exponent: Int(Int8(bitPattern: b[0])), low: low, high: high)
        }
    }

    static func parts(_ d: Decimal) -> Parts {
        if layoutIsKnown { return fastParts(d) }
        // Portable: the significand's digits, multiplied into 128 bits.
        var low: UInt64 = 0, high: UInt64 = 0
        for c in d.significand.magnitude.description.utf8 where c >= 48 && c <= 57 {
            let (l10, lo) = low.multipliedFullWidth(by: 10)
            high = high &* 10 &+ l10
            let (sum, carry) = lo.addingReportingOverflow(UInt64(c - 48))
            low = sum
            if carry { high &+= 1 }
        }
        return Parts(negative: d < 0, exponent: Int(d.exponent), low: low, high: high)
    }

    static func make(_ p: Parts) -> Decimal {
        var significand = Decimal(p.low)
        if p.high != 0 { significand += Decimal(p.high) * Decimal(sign: .plus, exponent: 0, significand: Decimal(UInt64(1) << 32) * Decimal(UInt64(1) << 32)) }
        return Decimal(sign: p.negative ? .minus : .plus, exponent: p.exponent, significand: significand)
    }

    /// `a + b`, or `a − b`, exactly, in 64-bit integers: both mantissas aligned to the smaller
    /// exponent. `nil` when that could overflow (or the layout is unknown): the caller uses
    /// Foundation's arithmetic, which costs ~15× more (a running `@sum` pays it per change).
    static func fastSum(_ a: Decimal, _ b: Decimal, subtracting: Bool) -> Decimal? {
        guard layoutIsKnown else { return nil }
        let x = fastParts(a), y = fastParts(b)
        guard x.high == 0, y.high == 0, abs(x.exponent - y.exponent) <= 18 else { return nil }
        var ma = x.low, mb = y.low
        let exponent = min(x.exponent, y.exponent)
        let scaleA = x.exponent - exponent, scaleB = y.exponent - exponent
        var p: UInt64 = 1
        for _ in 0..<max(scaleA, scaleB) { p *= 10 }
        if scaleA > 0 {
            let (m, o) = ma.multipliedReportingOverflow(by: p)
            guard !o else { return nil }
            ma = m
        }
        if scaleB > 0 {
            let (m, o) = mb.multipliedReportingOverflow(by: p)
            guard !o else { return nil }
            mb = m
        }
        let na = x.negative, nb = y.negative != subtracting
        let negative: Bool, magnitude: UInt64
        if na == nb {
            let (sum, o) = ma.addingReportingOverflow(mb)
            guard !o else { return nil }
            (negative, magnitude) = (na, sum)
        } else if ma >= mb {
            (negative, magnitude) = (na, ma - mb)
        } else {
            (negative, magnitude) = (nb, mb - ma)
        }
        return make(Parts(negative: negative && magnitude != 0, exponent: exponent, low: magnitude, high: 0))
    }

    /// `u8 sign (0 or 1)`, `i8 exponent`, `u8 n`, then the mantissa's `n` low bytes, little-endian.
    static func append(_ d: Decimal, to out: inout [UInt8]) {
        let p = parts(d)
        out.append(p.negative ? 1 : 0)
        out.append(UInt8(bitPattern: Int8(clamping: p.exponent)))
        var bytes: [UInt8] = []
        var lo = p.low, hi = p.high
        while lo != 0 || hi != 0 {
            bytes.append(UInt8(truncatingIfNeeded: lo))
            lo = lo >> 8 | (hi & 0xFF) << 56
            hi >>= 8
        }
        out.append(UInt8(bytes.count))
        out.append(contentsOf: bytes)
    }

    static func decode(sign: UInt8, exponent: UInt8, mantissa: ArraySlice<UInt8>) -> Decimal? {
        guard sign <= 1, mantissa.count <= 16 else { return nil }
        var low: UInt64 = 0, high: UInt64 = 0
        for (i, b) in mantissa.enumerated() {
            if i < 8 { low |= UInt64(b) << (8 * UInt64(i)) } else { high |= UInt64(b) << (8 * UInt64(i - 8)) }
        }
        return make(Parts(negative: sign == 1, exponent: Int(Int8(bitPattern: exponent)), low: low, high: high))
    }
}
