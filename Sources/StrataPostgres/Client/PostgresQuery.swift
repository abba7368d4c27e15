import Foundation

/// A statement and its parameters (`$1`, `$2`, … in `sql`), sent with libpq's `PQexecParams`:
/// values never become part of the text, so no value needs quoting.
struct PostgresQuery: Sendable, ExpressibleByStringLiteral {
    /// The statement's text.
    let sql: String
    /// The values of `$1`, `$2`, …, in order.
    let bindings: PostgresBindings

    /// A statement whose text is built by this module from names it quoted itself (``SQL``),
    /// with its parameters.
    init(unsafeSQL sql: String, binds bindings: PostgresBindings = PostgresBindings()) {
        self.sql = sql
        self.bindings = bindings
    }

    /// A statement without parameters.
    init(stringLiteral sql: String) {
        self.init(unsafeSQL: sql)
    }
}

/// The parameters of a statement, each in PostgreSQL's binary format with its type's OID (so
/// the server never parses a number or a date from text, and `NaN` or infinity travel as they
/// are).
///
/// Layout: every value's bytes follow each other in `bytes`; value `i` starts at `offsets[i]`
/// and is `lengths[i]` bytes long, or SQL `NULL` when `lengths[i]` is -1.
struct PostgresBindings: Sendable {
    private(set) var bytes: [UInt8] = []
    private(set) var offsets: [Int] = []
    private(set) var lengths: [Int32] = []
    private(set) var types: [UInt32] = []

    /// No parameters.
    init() {}

    /// No parameters yet, room for `capacity` of them.
    init(capacity: Int) {
        offsets.reserveCapacity(capacity)
        lengths.reserveCapacity(capacity)
        types.reserveCapacity(capacity)
        bytes.reserveCapacity(capacity * 8)
    }

    /// How many parameters there are.
    var count: Int { types.count }

    /// Appends `value` (`NULL` when it is nil).
    mutating func append<Value: PostgresEncodable>(_ value: Value) {
        let start = bytes.count
        types.append(Value.postgresType)
        offsets.append(start)
        if value.encode(into: &bytes) {
            lengths.append(Int32(bytes.count - start))
        } else {
            lengths.append(-1)
        }
    }

    /// Appends `bytes` as a `bytea`.
    mutating func append(bytes value: [UInt8]) {
        append(PostgresBytes(value))
    }

    /// Appends a column's values as one array parameter.
    mutating func append(_ array: ColumnArray) {
        let start = bytes.count
        types.append(array.kind.oids.array)
        offsets.append(start)
        array.encode(into: &bytes)
        lengths.append(Int32(bytes.count - start))
    }

    /// Appends a `NULL` of type `text` (the statement casts it where it needs another type).
    mutating func appendNull() {
        append(String?.none)
    }
}

/// A Swift value a statement can take as a parameter, in PostgreSQL's binary format.
protocol PostgresEncodable: Sendable {
    /// The OID of the PostgreSQL type the bytes are in.
    static var postgresType: UInt32 { get }
    /// Appends the value's binary form; false for SQL `NULL` (nothing appended).
    func encode(into bytes: inout [UInt8]) -> Bool
}

/// OIDs of the built-in types this module reads and writes (`pg_type.dat` in PostgreSQL's
/// sources; they are fixed across versions).
enum PostgresType {
    static let bool: UInt32 = 16
    static let bytea: UInt32 = 17
    static let name: UInt32 = 19
    static let int8: UInt32 = 20
    static let int2: UInt32 = 21
    static let int4: UInt32 = 23
    static let text: UInt32 = 25
    static let oid: UInt32 = 26
    static let float4: UInt32 = 700
    static let float8: UInt32 = 701
    static let nameArray: UInt32 = 1003
    static let textArray: UInt32 = 1009
    static let varcharArray: UInt32 = 1015
    static let int8Array: UInt32 = 1016
    static let bpchar: UInt32 = 1042
    static let varchar: UInt32 = 1043
    static let timestamp: UInt32 = 1114
    static let timestamptz: UInt32 = 1184
    static let numeric: UInt32 = 1700
    static let uuid: UInt32 = 2950

    /// The text-like types, whose binary form is the text's UTF-8 bytes.
    static let textual: Set<UInt32> = [text, varchar, bpchar, name]
}

extension [UInt8] {
    /// Appends `value` big-endian, as every integer of PostgreSQL's binary formats is.
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        for shift in stride(from: T.bitWidth - 8, through: 0, by: -8) {
            append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }
}

extension Int64: PostgresEncodable {
    static var postgresType: UInt32 { PostgresType.int8 }
    func encode(into bytes: inout [UInt8]) -> Bool {
        bytes.appendBigEndian(self)
        return true
    }
}

extension Bool: PostgresEncodable {
    static var postgresType: UInt32 { PostgresType.bool }
    func encode(into bytes: inout [UInt8]) -> Bool {
        bytes.append(self ? 1 : 0)
        return true
    }
}

extension Double: PostgresEncodable {
    static var postgresType: UInt32 { PostgresType.float8 }
    func encode(into bytes: inout [UInt8]) -> Bool {
        bytes.appendBigEndian(bitPattern)
        return true
    }
}

extension String: PostgresEncodable {
    static var postgresType: UInt32 { PostgresType.text }
    func encode(into bytes: inout [UInt8]) -> Bool {
        bytes.append(contentsOf: utf8)
        return true
    }
}

extension UUID: PostgresEncodable {
    static var postgresType: UInt32 { PostgresType.uuid }
    func encode(into bytes: inout [UInt8]) -> Bool {
        let u = uuid
        bytes.append(contentsOf: [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15])
        return true
    }
}

/// PostgreSQL's timestamps count microseconds from 2000-01-01 00:00 UTC; `Int64.max` and
/// `Int64.min` are `infinity` and `-infinity`.
enum PostgresTimestamp {
    /// 2000-01-01 00:00 UTC in seconds from Foundation's reference date (2001-01-01).
    static let epoch: TimeInterval = -31_622_400

    static let infinity = Int64.max
    static let minusInfinity = Int64.min

    /// The microseconds of `date`, rounded to the nearest; an infinite date is PostgreSQL's
    /// infinity, and a finite date past what 64 bits hold is a value the server refuses as out
    /// of range (it is never stored as another date).
    static func microseconds(of date: Date) -> Int64 {
        let seconds = date.timeIntervalSinceReferenceDate
        if seconds.isInfinite { return seconds > 0 ? infinity : minusInfinity }
        let micros = ((seconds - epoch) * 1_000_000).rounded(.toNearestOrEven)
        guard micros.isFinite, micros > -9.2e18, micros < 9.2e18 else {
            return micros < 0 || micros.isNaN ? minusInfinity + 1 : infinity - 1
        }
        return Int64(micros)
    }

    /// The date `micros` stands for.
    static func date(microseconds micros: Int64) -> Date {
        switch micros {
        case infinity: return Date(timeIntervalSinceReferenceDate: .infinity)
        case minusInfinity: return Date(timeIntervalSinceReferenceDate: -.infinity)
        default: return Date(timeIntervalSinceReferenceDate: epoch + Double(micros) / 1_000_000)
        }
    }
}

extension Date: PostgresEncodable {
    static var postgresType: UInt32 { PostgresType.timestamptz }
    func encode(into bytes: inout [UInt8]) -> Bool {
        bytes.appendBigEndian(PostgresTimestamp.microseconds(of: self))
        return true
    }
}

/// Bytes sent as a `bytea`.
struct PostgresBytes: PostgresEncodable {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    static var postgresType: UInt32 { PostgresType.bytea }
    func encode(into bytes: inout [UInt8]) -> Bool {
        bytes.append(contentsOf: self.bytes)
        return true
    }
}

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    static var postgresType: UInt32 { Wrapped.postgresType }
    func encode(into bytes: inout [UInt8]) -> Bool {
        guard let self else { return false }
        return self.encode(into: &bytes)
    }
}

/// An element type of a one-dimensional array parameter.
protocol PostgresArrayElement: PostgresEncodable {
    /// The OID of the array type whose elements are `postgresType`.
    static var postgresArrayType: UInt32 { get }
}

extension Int64: PostgresArrayElement {
    static var postgresArrayType: UInt32 { PostgresType.int8Array }
}

extension String: PostgresArrayElement {
    static var postgresArrayType: UInt32 { PostgresType.textArray }
}

extension Array: PostgresEncodable where Element: PostgresArrayElement {
    static var postgresType: UInt32 { Element.postgresArrayType }

    /// The binary array format: dimensions (1), whether any element is null (0), the element
    /// type, then the dimension's length and lower bound (1), then each element as its length
    /// and bytes.
    func encode(into bytes: inout [UInt8]) -> Bool {
        bytes.appendBigEndian(Int32(1))
        bytes.appendBigEndian(Int32(0))
        bytes.appendBigEndian(Element.postgresType)
        bytes.appendBigEndian(Int32(count))
        bytes.appendBigEndian(Int32(1))
        for element in self {
            let lengthAt = bytes.count
            bytes.appendBigEndian(Int32(0))
            _ = element.encode(into: &bytes)
            let length = UInt32(bytes.count - lengthAt - 4)
            for index in 0..<4 { bytes[lengthAt + index] = UInt8(truncatingIfNeeded: length >> (24 - 8 * index)) }
        }
        return true
    }
}
