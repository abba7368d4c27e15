import Foundation

/// The rows a statement returned, every column in PostgreSQL's binary format. They stay in
/// libpq's result, which the last copy of this value frees.
struct PostgresRows: Sendable, RandomAccessCollection {
    let result: PostgresResult

    var startIndex: Int { 0 }
    var endIndex: Int { result.rowCount }

    subscript(row: Int) -> PostgresRow {
        precondition(row >= 0 && row < result.rowCount, "row \(row) of \(result.rowCount)")
        return PostgresRow(result: result, row: row)
    }

    /// Every row as a tuple of `types`, column by column from the first.
    func decode<each Column: PostgresDecodable>(_ types: (repeat each Column).Type) throws -> [(repeat each Column)] {
        var rows: [(repeat each Column)] = []
        rows.reserveCapacity(count)
        for row in self {
            var column = 0
            func next<Value: PostgresDecodable>(_ type: Value.Type) throws -> Value {
                defer { column += 1 }
                return try row[column].decode(Value.self)
            }
            rows.append((repeat try next((each Column).self)))
        }
        return rows
    }
}

/// One row of ``PostgresRows``.
struct PostgresRow: Sendable {
    let result: PostgresResult
    let row: Int

    /// The cell of column `column` (from 0).
    subscript(column: Int) -> PostgresCell {
        PostgresCell(result: result, row: row, column: column)
    }
}

/// One value of a row, read when decoded.
struct PostgresCell: Sendable {
    let result: PostgresResult
    let row: Int
    let column: Int

    /// The value as `type`. Throws ``PostgresDecodingError`` when the column is missing, holds
    /// another type, is `NULL` where `type` is not optional, or its bytes are malformed.
    func decode<Value: PostgresDecodable>(_ type: Value.Type) throws -> Value {
        guard column >= 0, column < result.columnCount else {
            throw PostgresDecodingError(column: column, reason: "the statement returned \(result.columnCount) columns")
        }
        let value = PostgresValue(type: result.type(ofColumn: column), bytes: result.bytes(row: row, column: column))
        do {
            return try Value(postgres: value)
        } catch let reason as PostgresDecodingError.Reason {
            throw PostgresDecodingError(column: column, reason: reason.text)
        }
    }
}

/// A cell's type and bytes (nil: SQL `NULL`).
struct PostgresValue {
    let type: UInt32
    let bytes: [UInt8]?

    /// The bytes of a value that must not be `NULL`, of one of `types`.
    func bytes(of types: Set<UInt32>, as name: String) throws -> [UInt8] {
        guard let bytes else { throw PostgresDecodingError.Reason("NULL where \(name) was expected") }
        guard types.contains(type) else {
            throw PostgresDecodingError.Reason("a value of type \(type) where \(name) was expected")
        }
        return bytes
    }

    /// The big-endian integer of exactly `T`'s size at the start of `bytes`.
    static func integer<T: FixedWidthInteger>(_ type: T.Type, _ bytes: ArraySlice<UInt8>) throws -> T {
        guard bytes.count == MemoryLayout<T>.size else {
            throw PostgresDecodingError.Reason("\(bytes.count) bytes for a \(MemoryLayout<T>.size)-byte integer")
        }
        return bytes.reduce(T.zero) { $0 << 8 | T(truncatingIfNeeded: $1) }
    }
}

/// A value a statement's result could not be read as.
struct PostgresDecodingError: Error, CustomStringConvertible {
    let column: Int
    let reason: String

    var description: String { "column \(column + 1): \(reason)" }

    /// Why a value could not be decoded, before the column is known.
    struct Reason: Error {
        let text: String
        init(_ text: String) { self.text = text }
    }
}

/// A Swift type a column's binary value decodes to.
protocol PostgresDecodable {
    init(postgres value: PostgresValue) throws
}

extension Int64: PostgresDecodable {
    init(postgres value: PostgresValue) throws {
        let bytes = try value.bytes(of: [PostgresType.int2, PostgresType.int4, PostgresType.int8, PostgresType.oid],
                                    as: "an integer")
        switch bytes.count {
        case 2: self = Int64(try PostgresValue.integer(Int16.self, bytes[...]))
        case 4 where value.type == PostgresType.oid: self = Int64(try PostgresValue.integer(UInt32.self, bytes[...]))
        case 4: self = Int64(try PostgresValue.integer(Int32.self, bytes[...]))
        default: self = try PostgresValue.integer(Int64.self, bytes[...])
        }
    }
}

extension Bool: PostgresDecodable {
    init(postgres value: PostgresValue) throws {
        let bytes = try value.bytes(of: [PostgresType.bool], as: "a boolean")
        guard bytes.count == 1 else { throw PostgresDecodingError.Reason("\(bytes.count) bytes for a boolean") }
        self = bytes[0] != 0
    }
}

extension Double: PostgresDecodable {
    init(postgres value: PostgresValue) throws {
        let bytes = try value.bytes(of: [PostgresType.float4, PostgresType.float8], as: "a double")
        if bytes.count == 4 {
            self = Double(Float(bitPattern: try PostgresValue.integer(UInt32.self, bytes[...])))
        } else {
            self = Double(bitPattern: try PostgresValue.integer(UInt64.self, bytes[...]))
        }
    }
}

extension String: PostgresDecodable {
    init(postgres value: PostgresValue) throws {
        let bytes = try value.bytes(of: PostgresType.textual, as: "text")
        self = String(decoding: bytes, as: UTF8.self)
    }
}

extension UUID: PostgresDecodable {
    init(postgres value: PostgresValue) throws {
        let b = try value.bytes(of: [PostgresType.uuid], as: "a UUID")
        guard b.count == 16 else { throw PostgresDecodingError.Reason("\(b.count) bytes for a UUID") }
        self = UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                           b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }
}

extension Date: PostgresDecodable {
    init(postgres value: PostgresValue) throws {
        let bytes = try value.bytes(of: [PostgresType.timestamptz, PostgresType.timestamp], as: "a timestamp")
        self = PostgresTimestamp.date(microseconds: try PostgresValue.integer(Int64.self, bytes[...]))
    }
}

extension Decimal: PostgresDecodable {
    /// `numeric`'s binary form: the count of base-10,000 digits, the weight of the first (its
    /// power of 10,000), the sign (`0x4000` negative, `0xC000` NaN, `0xD000` and `0xF000` the
    /// infinities, which `Decimal` cannot hold), the count of decimal digits after the point,
    /// then the digits, each an `Int16`.
    init(postgres value: PostgresValue) throws {
        let bytes = try value.bytes(of: [PostgresType.numeric], as: "a numeric")
        guard bytes.count >= 8 else { throw PostgresDecodingError.Reason("\(bytes.count) bytes for a numeric") }
        let count = Int(try PostgresValue.integer(Int16.self, bytes[0..<2]))
        let weight = Int(try PostgresValue.integer(Int16.self, bytes[2..<4]))
        let sign = try PostgresValue.integer(UInt16.self, bytes[4..<6])
        let scale = Int(try PostgresValue.integer(UInt16.self, bytes[6..<8]))
        guard count >= 0, bytes.count == 8 + 2 * count else {
            throw PostgresDecodingError.Reason("a numeric of \(count) digits in \(bytes.count) bytes")
        }
        switch sign {
        case 0x0000, 0x4000: break
        case 0xC000:
            self = .nan
            return
        default: throw PostgresDecodingError.Reason("a numeric infinity or sign \(sign), which Decimal cannot hold")
        }
        var digits: [Int] = []
        for index in 0..<count {
            let digit = Int(try PostgresValue.integer(Int16.self, bytes[(8 + 2 * index)..<(10 + 2 * index)]))
            guard (0..<10_000).contains(digit) else { throw PostgresDecodingError.Reason("a numeric digit \(digit)") }
            digits.append(digit)
        }
        func digit(weight place: Int) -> Int {
            let index = weight - place
            return index >= 0 && index < count ? digits[index] : 0
        }
        func fourDigits(_ value: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: 4 - text.count) + text
        }
        var text = sign == 0x4000 ? "-" : ""
        if weight >= 0 {
            text += String(digit(weight: weight))
            for place in stride(from: weight - 1, through: 0, by: -1) { text += fourDigits(digit(weight: place)) }
        } else {
            text += "0"
        }
        if scale > 0 {
            var fraction = ""
            var place = -1
            while fraction.count < scale {
                fraction += fourDigits(digit(weight: place))
                place -= 1
            }
            text += "." + fraction.prefix(scale)
        }
        guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
            throw PostgresDecodingError.Reason("a numeric Decimal cannot hold")
        }
        self = decimal
    }
}

extension PostgresBytes: PostgresDecodable {
    init(postgres value: PostgresValue) throws {
        self.init(try value.bytes(of: [PostgresType.bytea], as: "bytea"))
    }
}

extension [String]: PostgresDecodable {
    /// The binary array format (see ``Array/encode(into:)``), one dimension, text elements.
    init(postgres value: PostgresValue) throws {
        let bytes = try value.bytes(of: [PostgresType.textArray, PostgresType.varcharArray, PostgresType.nameArray],
                                    as: "an array of text")
        guard bytes.count >= 12 else { throw PostgresDecodingError.Reason("\(bytes.count) bytes for an array") }
        let dimensions = try PostgresValue.integer(Int32.self, bytes[0..<4])
        if dimensions == 0 {
            self = []
            return
        }
        guard dimensions == 1, bytes.count >= 20 else {
            throw PostgresDecodingError.Reason("an array of \(dimensions) dimensions")
        }
        let count = Int(try PostgresValue.integer(Int32.self, bytes[12..<16]))
        var elements: [String] = []
        var offset = 20
        for _ in 0..<Swift.max(0, count) {
            guard offset + 4 <= bytes.count else { throw PostgresDecodingError.Reason("an array cut short") }
            let length = Int(try PostgresValue.integer(Int32.self, bytes[offset..<offset + 4]))
            offset += 4
            guard length >= 0 else { throw PostgresDecodingError.Reason("a NULL in an array of text") }
            guard offset + length <= bytes.count else { throw PostgresDecodingError.Reason("an array cut short") }
            elements.append(String(decoding: bytes[offset..<offset + length], as: UTF8.self))
            offset += length
        }
        self = elements
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    init(postgres value: PostgresValue) throws {
        self = value.bytes == nil ? nil : try Wrapped(postgres: value)
    }
}
