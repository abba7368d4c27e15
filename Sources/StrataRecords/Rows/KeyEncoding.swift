import Foundation

/// Order-preserving encodings: byte strings whose memcmp order is the values' order, for
/// primary keys and index keys (FORMAT.md §12, "Key values").
///
/// Each value starts with a tag (`null` sorts first); integers are big-endian with the sign bit
/// flipped; doubles and dates flip the sign bit (all bits when negative; -0 is +0 and every NaN
/// is one NaN, after +∞); strings are their NFC bytes (``TextOrder``) and binaries their bytes,
/// with `00` escaped as `00 FF` and ended by `00 01`, or by `00 02` when cut to fit the key;
/// decimals are sign, adjusted exponent, digits. Equal keys are equal values (for values that
/// were not cut), and key order is the order ``StoredValue/compare(_:_:)`` gives.
enum KeyEncoding {
    static let tagNull: UInt8 = 0x01
    static let tagValue: UInt8 = 0x02
    /// The byte after `00` that ends a whole string or binary.
    static let endWhole: UInt8 = 0x01
    /// The byte after `00` that ends a cut one: it sorts after the whole value with the same
    /// leading bytes (which is shorter), and never equals a whole value's key.
    static let endCut: UInt8 = 0x02

    /// The most escaped bytes a string or binary keeps in a key; a longer one is cut (the fetch
    /// re-checks rows, so a cut key only costs a few extra reads); unique constraints refuse
    /// such values instead.
    static let maxValueBytes = 900

    /// The most bytes the encoded values of one key take together, tags and terminators
    /// included: one string of ``maxValueBytes`` fits whole. With the 8-byte primary key (and
    /// the 8-byte parent of an extremes key) every key stays well under the store's 1,024.
    static let maxEncodedValuesBytes = maxValueBytes + 3

    static func primaryKey(_ pk: UInt64) -> [UInt8] {
        withUnsafeBytes(of: pk.bigEndian) { Array($0) }
    }

    /// The big-endian integer in the first 8 bytes of `bytes`, for bytes whose length the
    /// caller knows (its own keys, values it checked); keys read from a tree go through
    /// ``KeyReader``, which checks.
    static func decodePrimaryKey<C: Collection>(_ bytes: C) -> UInt64 where C.Element == UInt8 {
        var key: UInt64 = 0
        for byte in bytes.prefix(8) { key = key << 8 | UInt64(byte) }
        return key
    }

    /// Appends `value` with a budget of its own (``maxEncodedValuesBytes``); returns false when
    /// it had to be cut.
    @discardableResult
    static func append(_ value: StoredValue, to out: inout [UInt8]) -> Bool {
        var budget = maxEncodedValuesBytes
        return append(value, to: &out, budget: &budget)
    }

    /// Appends `value` within `budget` bytes and takes what it used from the budget. Returns
    /// false when the value did not fit whole: a string or binary is then cut (it ends with
    /// ``endCut``); any other value is left out. Either way the key is full.
    static func append(_ value: StoredValue, to out: inout [UInt8], budget: inout Int) -> Bool {
        let start = out.count
        defer { budget -= out.count - start }
        if value.isNull {
            guard budget >= 1 else { budget = 0; return false }
            out.append(tagNull)
            return true
        }
        switch value {
        case .null:
            return true
        case .string(let string):
            guard budget >= 3 else { budget = 0; return false }
            out.append(tagValue)
            if TextOrder.isASCII(string) { return appendBytes(string.utf8, &out, limit: budget - 3) }
            return appendBytes(string._nfcCodeUnits, &out, limit: budget - 3)
        case .binary(let bytes):
            guard budget >= 3 else { budget = 0; return false }
            out.append(tagValue)
            return appendBytes(bytes, &out, limit: budget - 3)
        default:
            break
        }
        // Other values are short: encoded in place, taken back if they do not fit.
        out.append(tagValue)
        switch value {
        case .null, .string, .binary: break
        case .bool(let flag): out.append(flag ? 1 : 0)
        case .int(let integer):
            withUnsafeBytes(of: (UInt64(bitPattern: integer) ^ (1 << 63)).bigEndian) { out.append(contentsOf: $0) }
        case .double(let double): appendDouble(double, &out)
        case .date(let date): appendDouble(date.timeIntervalSinceReferenceDate, &out)
        case .uuid(let uuid): withUnsafeBytes(of: uuid.uuid) { out.append(contentsOf: $0) }
        case .decimal(let decimal): appendDecimal(decimal, &out)
        }
        guard out.count - start <= budget else {
            out.removeSubrange(start...)
            budget = 0
            return false
        }
        return true
    }

    /// Whether a string's UTF-8 `bytes` are its key's bytes as they are: ASCII (its own NFC)
    /// without a `00` byte (nothing to escape), and few enough to fit a key whole.
    @inline(__always)
    static func isPlainASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count <= maxValueBytes else { return false }
        for byte in bytes where byte == 0 || byte >= 0x80 { return false }
        return true
    }

    /// Appends `string`'s key as ``append(_:to:)`` would, when the string is ASCII without a
    /// `00` byte and fits whole (nearly every probe: codes, names, words); otherwise appends
    /// nothing and returns false, for the general path. One pass over contiguous bytes decides
    /// both, where the general path scans for non-ASCII and then again for `00`.
    static func appendPlainASCII(_ string: String, to out: inout [UInt8]) -> Bool {
        let appended: Bool? = string.utf8.withContiguousStorageIfAvailable { bytes in
            guard isPlainASCII(bytes) else { return false }
            // The tag, the bytes, the terminator, and room for a primary key after them.
            if out.capacity < out.count + bytes.count + 11 {
                out.reserveCapacity(Swift.max(out.count + bytes.count + 11, out.capacity * 2))
            }
            out.append(tagValue)
            out.append(contentsOf: bytes)
            out.append(0)
            out.append(endWhole)
            return true
        }
        return appended ?? false
    }

    static func appendDouble(_ value: Double, _ out: inout [UInt8]) {
        // -0 and +0 are one key; every NaN is one key, after +∞ (the order sorts give NaN).
        let canonical = value.isNaN ? Double.nan : (value == 0 ? 0 : value)
        var bits = canonical.bitPattern
        bits = bits & (1 << 63) != 0 ? ~bits : bits ^ (1 << 63)
        withUnsafeBytes(of: bits.bigEndian) { out.append(contentsOf: $0) }
    }

    /// Escapes `bytes` (`00` → `00 FF`), keeping at most `limit` escaped bytes (an escape
    /// pair is never split), then the terminator: ``endWhole``, or ``endCut`` when bytes were
    /// left out. Returns whether all were kept.
    static func appendBytes<S: Sequence>(_ bytes: S, _ out: inout [UInt8], limit: Int) -> Bool
    where S.Element == UInt8 {
        // Contiguous bytes with no 00 to escape (nearly every string) go in one copy.
        let copied: Bool? = bytes.withContiguousStorageIfAvailable { buffer in
            guard buffer.count <= limit, !buffer.contains(0) else { return false }
            // Room for the terminator and a primary key after it, grown geometrically only
            // when short: an exact reserve reallocated every key.
            if out.capacity < out.count + buffer.count + 10 {
                out.reserveCapacity(Swift.max(out.count + buffer.count + 10, out.capacity * 2))
            }
            out.append(contentsOf: buffer)
            out.append(0)
            out.append(endWhole)
            return true
        }
        if copied == true { return true }
        var n = 0
        var whole = true
        for byte in bytes {
            let size = byte == 0 ? 2 : 1
            if n + size > limit { whole = false; break }
            out.append(byte)
            if byte == 0 { out.append(0xFF) }
            n += size
        }
        out.append(0)
        out.append(whole ? endWhole : endCut)
        return whole
    }

    /// Sign byte (0 negative, 1 zero, 2 positive), then for nonzero values the exponent of
    /// the leading digit and the digits, inverted for negative numbers.
    static func appendDecimal(_ decimal: Decimal, _ out: inout [UInt8]) {
        if decimal.isZero {
            out.append(1)
            return
        }
        let negative = decimal < 0
        let magnitude = negative ? -decimal : decimal
        var digits = Array(magnitude.significand.description.utf8)  // integer significand
        var exponent = Int(magnitude.exponent)
        while digits.count > 1 && digits.last == UInt8(ascii: "0") {
            digits.removeLast()
            exponent += 1
        }
        let adjusted = exponent + digits.count  // the value is 0.d1d2… × 10^adjusted
        let biased = UInt16(clamping: adjusted + 0x8000)
        out.append(negative ? 0 : 2)
        let stored = negative ? ~biased : biased
        out.append(UInt8(stored >> 8))
        out.append(UInt8(stored & 0xFF))
        for digit in digits { out.append(negative ? ~digit : digit) }
        out.append(negative ? 0xFF : 0)
    }

    /// The key of an index entry: the values within one budget of
    /// ``maxEncodedValuesBytes`` (those after a cut value are left out), then the primary key,
    /// which keeps entries unique.
    static func indexKey(_ values: [StoredValue], pk: UInt64) -> [UInt8] {
        // One allocation for the usual key (a few short values and the key): growing from
        // empty reallocated at each value, for every index entry of an insert (decision 73).
        var out: [UInt8] = []
        out.reserveCapacity(48)
        appendIndexKey(of: values, fields: values.indices, pk: pk, to: &out)
        return out
    }

    /// Appends the key of the entry of `row`'s `fields` in row `pk` (as ``indexKey(_:pk:)``
    /// spells it) to `out`: the write path builds its keys in one reused buffer, from the row
    /// as it is, without an array of values or a key array per entry (decision 80).
    @inline(__always)
    static func appendIndexKey<Fields: Sequence<Int>>(of row: [StoredValue], fields: Fields, pk: UInt64,
                                                      to out: inout [UInt8]) {
        var budget = maxEncodedValuesBytes
        for field in fields {
            guard append(row[field], to: &out, budget: &budget) else { break }
        }
        appendPrimaryKey(pk, to: &out)
    }

    /// Appends `pk` as a primary key (8 bytes, big-endian).
    static func appendPrimaryKey(_ pk: UInt64, to out: inout [UInt8]) {
        withUnsafeBytes(of: pk.bigEndian) { out.append(contentsOf: $0) }
    }
}
