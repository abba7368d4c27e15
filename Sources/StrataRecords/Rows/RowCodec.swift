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
        // or three times per row with a string in it (callgrind, an update of 10,000 rows).
        out.reserveCapacity(sizeBound(values))
        out.append(version)
        appendVarint(&out, UInt64(values.count))
        let bitmapStart = out.count
        out.append(contentsOf: repeatElement(0, count: (values.count + 7) / 8))
        for (i, v) in values.enumerated() {
            if v.isNull { continue }
            out[bitmapStart + i / 8] |= 1 << UInt8(i % 8)
            switch v {
            case .null: break
            case .bool(let b): out.append(b ? 1 : 0)
            case .int(let x): appendVarint(&out, UInt64(bitPattern: (x << 1) ^ (x >> 63)))
            case .double(let d): appendLE(&out, d.bitPattern)
            case .date(let d): appendLE(&out, d.timeIntervalSinceReferenceDate.bitPattern)
            case .decimal(let d): DecimalCoding.append(d, to: &out)
            case .string(let s):
                appendVarint(&out, UInt64(s.utf8.count))
                out.append(contentsOf: s.utf8)
            case .binary(let b):
                appendVarint(&out, UInt64(b.count))
                out.append(contentsOf: b)
            case .uuid(let u):
                withUnsafeBytes(of: u.uuid) { out.append(contentsOf: $0) }
            }
        }
    }

    /// At least the bytes ``encode(_:fields:)`` writes for `values` (varints counted at their
    /// longest, decimals at their largest mantissa: 128 bits).
    static func sizeBound(_ values: [StoredValue]) -> Int {
        var n = 1 + 10 + (values.count + 7) / 8
        for v in values {
            switch v {
            case .null: break
            case .bool: n += 1
            case .int: n += 10
            case .double, .date: n += 8
            case .decimal: n += 3 + 16
            case .string(let s): n += 10 + s.utf8.count
            case .binary(let b): n += 10 + b.count
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
        var r = Reader(bytes: bytes)
        guard try r.byte() == version else { throw StrataError.corrupt("row format version", offset: nil) }
        // The field count is bounded by the layout, not by the row's bytes: absent fields take
        // no bytes, so seven fields of which two are set fit in five bytes.
        let count = try r.varint()
        guard count <= UInt64(fields.count) else { throw StrataError.corrupt("row has \(count) fields, the layout \(fields.count)", offset: nil) }
        let n = Int(count)
        let bitmap = try r.take((n + 7) / 8)
        // Reserved and appended in layout order (absent fields as nil): both are inlined and
        // specialized here, while `Array(repeating:count:)` of an enum with payloads fills
        // through the generic value witnesses (~700 instructions a row) and
        // `Array(unsafeUninitializedCapacity:)` allocates through the runtime's generic metadata
        // lookup (~650). A throw drops the partial array with the row.
        var values: [StoredValue] = []
        values.reserveCapacity(fields.count)
        for i in 0..<fields.count {
            guard i < n, bitmap[bitmap.startIndex + i / 8] & (1 << UInt8(i % 8)) != 0 else {
                values.append(.null)
                continue
            }
            switch fields[i].type {
            case .bool: values.append(.bool(try r.byte() != 0))
            case .int16, .int32, .int64:
                let z = try r.varint()
                values.append(.int(Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))))
            case .double: values.append(.double(Double(bitPattern: try r.u64())))
            case .date: values.append(.date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try r.u64()))))
            case .decimal:
                let sign = try r.byte(), exponent = try r.byte()
                let n = Int(try r.byte())
                guard let d = DecimalCoding.decode(sign: sign, exponent: exponent, mantissa: ArraySlice(try r.take(n))) else {
                    throw StrataError.corrupt("decimal field", offset: nil)
                }
                values.append(.decimal(d))
            case .string: values.append(.string(String(decoding: try r.take(try r.length()), as: UTF8.self)))
            case .binary: values.append(.binary(Array(try r.take(try r.length()))))
            case .uuid:
                let b = try r.take(16)
                values.append(.uuid(UUID(uuid: (b[b.startIndex], b[b.startIndex + 1], b[b.startIndex + 2], b[b.startIndex + 3], b[b.startIndex + 4], b[b.startIndex + 5], b[b.startIndex + 6], b[b.startIndex + 7],
                                                b[b.startIndex + 8], b[b.startIndex + 9], b[b.startIndex + 10], b[b.startIndex + 11], b[b.startIndex + 12], b[b.startIndex + 13], b[b.startIndex + 14], b[b.startIndex + 15]))))
            }
        }
        return values
    }

    static func appendVarint(_ out: inout [UInt8], _ v: UInt64) {
        var v = v
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    static func appendLE(_ out: inout [UInt8], _ v: UInt64) {
        withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) }
    }

    /// Reads a row's bytes, bounds-checked: nothing a file holds can read past the row. Inlined
    /// into the decoder (a call per field read cost ~40–70 instructions); the throws are out of
    /// line.
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
            var v = UInt64(first & 0x7F)
            var shift: UInt64 = 7
            while true {
                let b = try byte()
                guard shift < 64 else { throw StrataError.corrupt("row varint too long", offset: nil) }
                v |= UInt64(b & 0x7F) << shift
                if b < 0x80 { return v }
                shift += 7
            }
        }

        /// A varint that counts bytes or fields: at most what the row holds (a file's varint
        /// may claim anything up to 2^64, which `Int(_:)` would trap on).
        @inline(__always)
        mutating func length() throws -> Int {
            let v = try varint()
            guard v <= UInt64(bytes.count) else { throw Reader.lengthBeyondRow(v, bytes.count) }
            return Int(v)
        }

        @inline(__always)
        mutating func u64() throws -> UInt64 {
            let s = try take(8)
            return UInt64(littleEndian: s.loadUnaligned(as: UInt64.self))
        }

        @inline(never)
        static func endsEarly() -> StrataError { .corrupt("row ends early", offset: nil) }

        @inline(never)
        static func runsPast(_ n: Int) -> StrataError { .corrupt("row field of \(n) bytes runs past the row", offset: nil) }

        @inline(never)
        static func lengthBeyondRow(_ v: UInt64, _ count: Int) -> StrataError {
            .corrupt("row length \(v) beyond the row's \(count) bytes", offset: nil)
        }
    }
}
