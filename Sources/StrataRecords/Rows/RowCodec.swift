import Foundation
import StrataStorage

/// The stored form of a row (FORMAT.md, "Records"): a version byte, the field count, a
/// presence bitmap, then each present field in layout order.
///
/// | type | bytes |
/// |---|---|
/// | bool | 1 |
/// | int16/32/64, to-one key | zigzag varint |
/// | double, date | 8, IEEE 754 little-endian (dates: seconds since 2001-01-01) |
/// | decimal | sign byte, exponent byte, mantissa length, mantissa bytes (little-endian) |
/// | string, binary | varint length + bytes (UTF-8) |
/// | uuid | 16 |
///
/// Rows written by an older layout have fewer fields; missing trailing fields read as absent.
enum RowCodec {
    static let version: UInt8 = 1

    static func encode(_ values: [StoredValue], fields: [Field]) -> [UInt8] {
        var out: [UInt8] = []
        encode(values, fields: fields, into: &out)
        return out
    }

    /// ``encode(_:fields:)`` into `out`, replacing what it held: a transaction writing many
    /// rows encodes each into one buffer it keeps, and allocates nothing per row.
    static func encode(_ values: [StoredValue], fields: [Field], into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        // One allocation at most, of a bound on the row's size: a guessed capacity grew two
        // or three times per row with a string in it (decision 49).
        out.reserveCapacity(sizeBound(values))
        out.append(version)
        appendVarint(&out, UInt64(values.count))
        // The presence bitmap gathered a byte at a time and appended once per byte, then the
        // values: no read-modify-write of the array per value (decision 103).
        var bits: UInt8 = 0
        for (i, value) in values.enumerated() {
            if !value.isNull { bits |= 1 << UInt8(i & 7) }
            if i & 7 == 7 {
                out.append(bits)
                bits = 0
            }
        }
        if values.count & 7 != 0 { out.append(bits) }
        for value in values where !value.isNull { appendValue(value, to: &out) }
    }

    /// A string's UTF-8 bytes appended as one copy where the string holds them contiguously
    /// (every native string), not through its `utf8` view as a sequence.
    @inline(__always)
    static func appendUTF8(_ string: String, to out: inout [UInt8]) {
        let copied: Void? = string.utf8.withContiguousStorageIfAvailable { out.append(contentsOf: $0) }
        if copied == nil { out.append(contentsOf: string.utf8) }
    }

    /// The bytes of one value as a row holds it (a row skips `null`s); `tagged`, after its type
    /// tag (``StoredValue/Tag``), as a history entry holds it, written in the same pass.
    @inline(__always)
    static func appendValue(_ value: StoredValue, to out: inout [UInt8], tagged: Bool = false) {
        switch value {
        case .null: if tagged { out.append(StoredValue.Tag.null.rawValue) }
        case .bool(let flag):
            if tagged { out.append(StoredValue.Tag.bool.rawValue) }
            out.append(flag ? 1 : 0)
        case .int(let integer):
            if tagged { out.append(StoredValue.Tag.int.rawValue) }
            appendVarint(&out, UInt64(bitPattern: (integer << 1) ^ (integer >> 63)))
        case .double(let double):
            if tagged { out.append(StoredValue.Tag.double.rawValue) }
            appendLE(&out, double.bitPattern)
        case .date(let date):
            if tagged { out.append(StoredValue.Tag.date.rawValue) }
            appendLE(&out, date.timeIntervalSinceReferenceDate.bitPattern)
        case .decimal(let decimal):
            if tagged { out.append(StoredValue.Tag.decimal.rawValue) }
            DecimalCoding.append(decimal, to: &out)
        case .string(let string):
            if tagged { out.append(StoredValue.Tag.string.rawValue) }
            appendVarint(&out, UInt64(string.utf8.count))
            appendUTF8(string, to: &out)
        case .binary(let bytes):
            if tagged { out.append(StoredValue.Tag.binary.rawValue) }
            appendVarint(&out, UInt64(bytes.count))
            out.append(contentsOf: bytes)
        case .uuid(let uuid):
            if tagged { out.append(StoredValue.Tag.uuid.rawValue) }
            withUnsafeBytes(of: uuid.uuid) { out.append(contentsOf: $0) }
        }
    }

    /// At least the bytes ``encode(_:fields:)`` writes for `values` (varints counted at their
    /// longest, decimals at their largest mantissa: 128 bits).
    static func sizeBound(_ values: [StoredValue]) -> Int {
        var n = 1 + 10 + (values.count + 7) / 8
        for value in values {
            switch value {
            case .null: break
            case .bool: n += 1
            case .int: n += 10
            case .double, .date: n += 8
            case .decimal: n += 3 + 16
            case .string(let string): n += 10 + string.utf8.count
            case .binary(let bytes): n += 10 + bytes.count
            case .uuid: n += 16
            }
        }
        return n
    }

    /// Decodes a row of `fields`. Throws `corrupt` when the bytes do not fit the layout.
    static func decode(_ bytes: [UInt8], fields: [Field]) throws -> [StoredValue] {
        try bytes.withUnsafeBytes { try decode($0, fields: fields) }
    }

    /// Decodes a row from borrowed bytes (a tree's value, read in place).
    static func decode(_ bytes: UnsafeRawBufferPointer, fields: [Field]) throws -> [StoredValue] {
        var reader = Reader(bytes: bytes)
        let (n, bitmap) = try readHeader(&reader, fields: fields)
        // Reserved and appended in layout order (absent fields as nil): both are inlined and
        // specialized here, while `Array(repeating:count:)` of an enum with payloads fills
        // through the generic value witnesses and `Array(unsafeUninitializedCapacity:)`
        // allocates through the runtime's generic metadata lookup, each a cost per row
        // (decision 48). A throw drops the partial array with the row.
        var values: [StoredValue] = []
        values.reserveCapacity(fields.count)
        for i in 0..<fields.count {
            guard i < n, bitmap[bitmap.startIndex + i / 8] & (1 << UInt8(i % 8)) != 0 else {
                values.append(.null)
                continue
            }
            values.append(try readValue(fields[i].type, from: &reader))
        }
        return values
    }

    /// The version byte, the count of fields written and their presence bitmap, checked.
    @inline(__always)
    private static func readHeader(_ reader: inout Reader, fields: [Field]) throws
        -> (count: Int, bitmap: UnsafeRawBufferPointer) {
        guard try reader.byte() == version else { throw StrataError.corrupt("row format version", offset: nil) }
        // The field count is bounded by the layout, not by the row's bytes: absent fields take
        // no bytes, so seven fields of which two are set fit in five bytes.
        let count = try reader.varint()
        guard count <= UInt64(fields.count) else {
            throw StrataError.corrupt("row has \(count) fields, the layout \(fields.count)", offset: nil)
        }
        let n = Int(count)
        return (n, try reader.take((n + 7) / 8))
    }

    /// Decodes the fields of a row that `needed` marks (parallel to `fields`); the others
    /// read as `.null`, their bytes skipped, not decoded (a scan that evaluates a predicate on
    /// two fields does not build the row's strings). The bytes are checked as far as ``decode(_:fields:)``
    /// checks them: a skipped value must still fit.
    static func decode(_ bytes: UnsafeRawBufferPointer, fields: [Field], needed: [Bool]) throws -> [StoredValue] {
        var reader = Reader(bytes: bytes)
        let (n, bitmap) = try readHeader(&reader, fields: fields)
        var values: [StoredValue] = []
        values.reserveCapacity(fields.count)
        for i in 0..<fields.count {
            guard i < n, bitmap[bitmap.startIndex + i / 8] & (1 << UInt8(i % 8)) != 0 else {
                values.append(.null)
                continue
            }
            if needed[i] {
                values.append(try readValue(fields[i].type, from: &reader))
            } else {
                try skipValue(fields[i].type, in: &reader)
                values.append(.null)
            }
        }
        return values
    }

    /// The value of field `field` alone: the row's other values are skipped, not decoded, and
    /// checked as far as ``decode(_:fields:needed:)`` checks them (each must fit). What a scan's
    /// predicate reads when it compares fields with constants: no row is built.
    static func value(ofField field: Int, in bytes: UnsafeRawBufferPointer, fields: [Field]) throws -> StoredValue {
        guard let stored = try storedValue(ofField: field, in: bytes, fields: fields) else { return .null }
        var reader = Reader(bytes: stored)
        return try readValue(fields[field].type, from: &reader)
    }

    /// The stored bytes of field `field` alone (one value as ``appendValue(_:to:tagged:)``
    /// writes it), or nil when the row holds none: what a comparison decided on stored bytes
    /// reads (``StoredComparison``), and what ``value(ofField:in:fields:)`` decodes. Every value
    /// of the row is checked as far as ``decode(_:fields:needed:)`` checks it (each must fit).
    static func storedValue(ofField field: Int, in bytes: UnsafeRawBufferPointer,
                            fields: [Field]) throws -> UnsafeRawBufferPointer? {
        var reader = Reader(bytes: bytes)
        let (n, bitmap) = try readHeader(&reader, fields: fields)
        var start = 0, end = -1
        for i in 0..<n where bitmap[bitmap.startIndex + i / 8] & (1 << UInt8(i % 8)) != 0 {
            if i == field { start = reader.at }
            try skipValue(fields[i].type, in: &reader)
            if i == field { end = reader.at }
        }
        guard end >= start else { return nil }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }

    // MARK: A walk that does not throw

    /// The field count of a row whose header a quick walk takes — version 1, the count in one
    /// byte (any layout of fewer than 128 fields), at most `fieldCount`, the presence bitmap
    /// inside the row — or nil (the throwing path then reads it, or refuses it). The present
    /// values start at ``quickValuesStart(count:)``; ``quickIsPresent(_:in:)`` reads the bitmap.
    @inline(__always)
    static func quickFieldCount(_ bytes: UnsafeRawBufferPointer, layout fieldCount: Int) -> Int? {
        guard bytes.count >= 2, bytes[0] == version else { return nil }
        let count = Int(bytes[1])
        guard count < 0x80, count <= fieldCount, quickValuesStart(count: count) <= bytes.count else { return nil }
        return count
    }

    /// Where the values of a row of `count` fields start, after a one-byte count.
    @inline(__always)
    static func quickValuesStart(count: Int) -> Int { 2 + (count + 7) / 8 }

    /// Whether field `i` holds a value, in a row whose count took one byte.
    @inline(__always)
    static func quickIsPresent(_ i: Int, in bytes: UnsafeRawBufferPointer) -> Bool {
        bytes[2 + i &>> 3] & (1 << UInt8(i & 7)) != 0
    }

    /// Where the value of `type` starting at `start` ends, checked as ``skipValue(_:in:)``
    /// checks it (it must fit in the row; an int's varint takes at most ten bytes), or nil where
    /// that would throw (and for a string's length of more than nine bytes, which no row holds).
    /// ``StoredRowFilter`` walks rows with it: the throwing skip, called per value, cost more
    /// than the walk.
    @inline(__always)
    static func quickValueEnd(_ type: AttributeType, in bytes: UnsafeRawBufferPointer, at start: Int) -> Int? {
        let end = bytes.count
        var at = start
        switch type {
        case .bool: at += 1
        case .int16, .int32, .int64:
            var taken = 0
            while true {
                guard at < end, taken < 10 else { return nil }
                let byte = bytes[at]
                at += 1
                taken += 1
                if byte < 0x80 { break }
            }
        case .double, .date: at += 8
        case .decimal:
            // Sign, exponent, mantissa length, mantissa.
            guard at + 3 <= end else { return nil }
            at += 3 + Int(bytes[at + 2])
        case .string, .binary:
            var length = 0, shift = 0
            while true {
                guard at < end, shift < 63 else { return nil }
                let byte = bytes[at]
                at += 1
                length |= Int(byte & 0x7F) << shift
                if byte < 0x80 { break }
                shift += 7
            }
            guard length <= end else { return nil }
            at += length
        case .uuid: at += 16
        }
        return at <= end ? at : nil
    }

    /// Moves past one value of `type` without decoding it.
    @inline(__always)
    static func skipValue(_ type: AttributeType, in reader: inout Reader) throws {
        switch type {
        case .bool: _ = try reader.byte()
        case .int16, .int32, .int64: _ = try reader.varint()
        case .double, .date: _ = try reader.take(8)
        case .decimal:
            _ = try reader.take(2)
            _ = try reader.take(Int(try reader.byte()))
        case .string, .binary: _ = try reader.take(try reader.length())
        case .uuid: _ = try reader.take(16)
        }
    }

    /// Reads one value of `type` that is present, as ``appendValue(_:to:)`` wrote it.
    @inline(__always)
    static func readValue(_ type: AttributeType, from reader: inout Reader) throws -> StoredValue {
        switch type {
        case .bool: return .bool(try reader.byte() != 0)
        case .int16, .int32, .int64:
            let zigzag = try reader.varint()
            return .int(Int64(bitPattern: (zigzag >> 1) ^ (0 &- (zigzag & 1))))
        case .double: return .double(Double(bitPattern: try reader.u64()))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.u64())))
        case .decimal:
            let sign = try reader.byte(), exponent = try reader.byte()
            let mantissaLength = Int(try reader.byte())
            let mantissa = try reader.take(mantissaLength)
            guard let decimal = DecimalCoding.decode(sign: sign, exponent: exponent, mantissa: mantissa) else {
                throw StrataError.corrupt("decimal field", offset: nil)
            }
            return .decimal(decimal)
        case .string: return .string(String(decoding: try reader.take(try reader.length()), as: UTF8.self))
        case .binary: return .binary(Array(try reader.take(try reader.length())))
        case .uuid:
            let raw = try reader.take(16)
            let start = raw.startIndex
            return .uuid(UUID(uuid: (
                raw[start], raw[start + 1], raw[start + 2], raw[start + 3], raw[start + 4], raw[start + 5],
                raw[start + 6], raw[start + 7], raw[start + 8], raw[start + 9], raw[start + 10], raw[start + 11],
                raw[start + 12], raw[start + 13], raw[start + 14], raw[start + 15])))
        }
    }

    @inline(__always)
    static func appendVarint(_ out: inout [UInt8], _ value: UInt64) {
        // One byte: every small count, length, name index and primary key below 128.
        if value < 0x80 {
            out.append(UInt8(truncatingIfNeeded: value))
            return
        }
        var rest = value
        while rest >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        out.append(UInt8(rest))
    }

    static func appendLE(_ out: inout [UInt8], _ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
    }

    /// Reads a row's bytes, bounds-checked: nothing a file holds can read past the row. Inlined
    /// into the decoder (a call per field read cost more than the read; decision 49); the
    /// throws are out of line.
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var at = 0

        @inline(__always)
        mutating func byte() throws -> UInt8 {
            guard at < bytes.count else { throw Reader.endsEarly() }
            at += 1
            return bytes[at - 1]
        }

        @inline(__always)
        mutating func take(_ n: Int) throws -> UnsafeRawBufferPointer {
            guard n >= 0, n <= bytes.count - at else { throw Reader.runsPast(n) }
            at += n
            return UnsafeRawBufferPointer(rebasing: bytes[(at - n)..<at])
        }

        @inline(__always)
        mutating func varint() throws -> UInt64 {
            // One byte: every small integer and length.
            let first = try byte()
            if first < 0x80 { return UInt64(first) }
            var value = UInt64(first & 0x7F)
            var shift: UInt64 = 7
            while true {
                let next = try byte()
                guard shift < 64 else { throw StrataError.corrupt("row varint too long", offset: nil) }
                value |= UInt64(next & 0x7F) << shift
                if next < 0x80 { return value }
                shift += 7
            }
        }

        /// A varint that counts bytes or fields: at most what the row holds (a file's varint
        /// may claim anything up to 2^64, which `Int(_:)` would trap on).
        @inline(__always)
        mutating func length() throws -> Int {
            let claimed = try varint()
            guard claimed <= UInt64(bytes.count) else { throw Reader.lengthBeyondRow(claimed, bytes.count) }
            return Int(claimed)
        }

        @inline(__always)
        mutating func u64() throws -> UInt64 {
            let raw = try take(8)
            return raw.loadLittleEndianUInt64()
        }

        @inline(never)
        static func endsEarly() -> StrataError { .corrupt("row ends early", offset: nil) }

        @inline(never)
        static func runsPast(_ n: Int) -> StrataError {
            .corrupt("row field of \(n) bytes runs past the row", offset: nil)
        }

        @inline(never)
        static func lengthBeyondRow(_ length: UInt64, _ count: Int) -> StrataError {
            .corrupt("row length \(length) beyond the row's \(count) bytes", offset: nil)
        }
    }
}
