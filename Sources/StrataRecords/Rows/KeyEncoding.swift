import Foundation

/// Order-preserving encodings: byte strings whose memcmp order is the values' order, for
/// primary keys and index keys (FORMAT.md, "Records").
///
/// Each value starts with a tag (`null` sorts first); integers are big-endian with the sign bit
/// flipped; doubles and dates flip the sign bit (all bits when negative); strings and binaries
/// escape `00` as `00 FF` and end with `00 01`; decimals are sign, adjusted exponent, digits.
enum KeyEncoding {
    static let tagNull: UInt8 = 0x01
    static let tagValue: UInt8 = 0x02

    /// Index keys longer than this are cut (the fetch re-checks rows, so a cut key only costs
    /// a few extra reads); unique constraints refuse such values instead.
    static let maxValueBytes = 900

    static func primaryKey(_ pk: UInt64) -> [UInt8] {
        withUnsafeBytes(of: pk.bigEndian) { Array($0) }
    }

    static func decodePrimaryKey<C: Collection>(_ bytes: C) -> UInt64 where C.Element == UInt8 {
        var v: UInt64 = 0
        for b in bytes.prefix(8) { v = v << 8 | UInt64(b) }
        return v
    }

    /// Appends `value`; returns false when the value had to be cut at ``maxValueBytes``.
    @discardableResult
    static func append(_ value: Value, to out: inout [UInt8]) -> Bool {
        if value.isNull {
            out.append(tagNull)
            return true
        }
        out.append(tagValue)
        switch value {
        case .null: return true
        case .bool(let b): out.append(b ? 1 : 0)
        case .int(let i): withUnsafeBytes(of: (UInt64(bitPattern: i) ^ (1 << 63)).bigEndian) { out.append(contentsOf: $0) }
        case .double(let d): appendDouble(d, &out)
        case .date(let d): appendDouble(d.timeIntervalSinceReferenceDate, &out)
        case .uuid(let u): withUnsafeBytes(of: u.uuid) { out.append(contentsOf: $0) }
        case .string(let s): return appendBytes(s.utf8, &out)
        case .binary(let b): return appendBytes(b, &out)
        case .decimal(let d): appendDecimal(d, &out)
        }
        return true
    }

    static func appendDouble(_ d: Double, _ out: inout [UInt8]) {
        let d = d == 0 ? 0 : d  // -0 and +0 are one key
        var bits = d.bitPattern
        bits = bits & (1 << 63) != 0 ? ~bits : bits ^ (1 << 63)
        withUnsafeBytes(of: bits.bigEndian) { out.append(contentsOf: $0) }
    }

    static func appendBytes<S: Sequence>(_ bytes: S, _ out: inout [UInt8]) -> Bool where S.Element == UInt8 {
        // Contiguous bytes with no 00 to escape (nearly every string) go in one copy.
        let copied: Bool? = bytes.withContiguousStorageIfAvailable { b in
            guard b.count <= maxValueBytes, !b.contains(0) else { return false }
            out.reserveCapacity(out.count + b.count + 2)
            out.append(contentsOf: b)
            out.append(0)
            out.append(1)
            return true
        }
        if copied == true { return true }
        var n = 0
        var whole = true
        for b in bytes {
            if n >= maxValueBytes { whole = false; break }
            out.append(b)
            if b == 0 { out.append(0xFF) }
            n += 1
        }
        out.append(0)
        out.append(1)
        return whole
    }

    /// Sign byte (0 negative, 1 zero, 2 positive), then for nonzero values the exponent of
    /// the leading digit and the digits, inverted for negative numbers.
    static func appendDecimal(_ d: Decimal, _ out: inout [UInt8]) {
        if d.isZero {
            out.append(1)
            return
        }
        let negative = d < 0
        let magnitude = negative ? -d : d
        var digits = Array(magnitude.significand.description.utf8)  // integer significand
        var exponent = Int(magnitude.exponent)
        while digits.count > 1 && digits.last == UInt8(ascii: "0") {
            digits.removeLast()
            exponent += 1
        }
        let adjusted = exponent + digits.count  // the value is 0.d1d2… × 10^adjusted
        let biased = UInt16(clamping: adjusted + 0x8000)
        out.append(negative ? 0 : 2)
        let e = negative ? ~biased : biased
        out.append(UInt8(e >> 8))
        out.append(UInt8(e & 0xFF))
        for c in digits { out.append(negative ? ~c : c) }
        out.append(negative ? 0xFF : 0)
    }

    /// The key of an index entry: each value, then the primary key (entries stay unique).
    static func indexKey(_ values: [Value], pk: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        for v in values { append(v, to: &out) }
        out += primaryKey(pk)
        return out
    }
}
