import Foundation
import StrataRecords

/// One column of a statement's rows as an array parameter in PostgreSQL's binary format, NULLs
/// included: a batch's upsert is `… FROM unnest($1::bigint[], $2::text[], …)`, a parameter a
/// column, so its text, its parse and its plan stay the same size whatever its rows (a row of
/// parameters each made PostgreSQL parse and plan an expression per value; decision 114).
///
/// Layout of the encoded array (PostgreSQL's `array_recv`): the number of dimensions (1),
/// whether any element is NULL, the element type's OID, the dimension's length and lower bound
/// (1), then each element as its length (-1 for NULL) and bytes, every integer big-endian.
struct ColumnArray {
    /// The element type a column travels as: the column's own, or one the statement casts to
    /// it (`smallint` and `integer` as `bigint`, `numeric` as text, exactly as a single
    /// parameter of the column would travel).
    enum Kind {
        case int8, bool, float8, text, timestamptz, uuid, bytea

        init(sqlType: String) {
            switch sqlType {
            case "bigint", "smallint", "integer": self = .int8
            case "boolean": self = .bool
            case "double precision": self = .float8
            case "timestamp with time zone": self = .timestamptz
            case "uuid": self = .uuid
            case "bytea": self = .bytea
            default: self = .text
            }
        }

        /// The SQL name of the element type.
        var sqlType: String {
            switch self {
            case .int8: "bigint"
            case .bool: "boolean"
            case .float8: "double precision"
            case .text: "text"
            case .timestamptz: "timestamp with time zone"
            case .uuid: "uuid"
            case .bytea: "bytea"
            }
        }

        /// The SQL name of the array type.
        var arrayType: String { sqlType + "[]" }

        /// The cast from an element of this kind to a column of `columnType` (none when they
        /// are the same type).
        func cast(to columnType: String) -> String { columnType == sqlType ? "" : "::\(columnType)" }

        /// The OIDs of the element type and of its array type (`pg_type.dat`).
        var oids: (element: UInt32, array: UInt32) {
            switch self {
            case .int8: (PostgresType.int8, PostgresType.int8Array)
            case .bool: (PostgresType.bool, 1000)
            case .float8: (PostgresType.float8, 1022)
            case .text: (PostgresType.text, PostgresType.textArray)
            case .timestamptz: (PostgresType.timestamptz, 1185)
            case .uuid: (PostgresType.uuid, 2951)
            case .bytea: (PostgresType.bytea, 1001)
            }
        }
    }

    let kind: Kind
    /// The elements, each with its length, as they follow the header.
    private var elements: [UInt8] = []
    private(set) var count = 0
    private var hasNull = false

    init(kind: Kind, capacity: Int) {
        self.kind = kind
        elements.reserveCapacity(capacity * 12)
    }

    /// Appends `value`, or returns false (appending nothing) when this kind cannot hold it as
    /// a single parameter of the column would have travelled: a value of another type than the
    /// column's.
    mutating func append(_ value: StoredValue) -> Bool {
        let lengthAt = elements.count
        switch (kind, value) {
        case (_, .null):
            elements.appendBigEndian(Int32(-1))
            hasNull = true
            count += 1
            return true
        case (.int8, .int(let integer)): elements.appendBigEndian(Int32(8)); _ = integer.encode(into: &elements)
        case (.bool, .bool(let flag)): elements.appendBigEndian(Int32(1)); _ = flag.encode(into: &elements)
        case (.float8, .double(let double)): elements.appendBigEndian(Int32(8)); _ = double.encode(into: &elements)
        case (.text, .string(let string)): elements.appendBigEndian(Int32(0)); _ = string.encode(into: &elements)
        case (.text, .decimal(let decimal)):
            elements.appendBigEndian(Int32(0))
            _ = (decimal.isNaN ? "NaN" : decimal.description).encode(into: &elements)
        case (.timestamptz, .date(let date)): elements.appendBigEndian(Int32(8)); _ = date.encode(into: &elements)
        case (.uuid, .uuid(let uuid)): elements.appendBigEndian(Int32(16)); _ = uuid.encode(into: &elements)
        case (.bytea, .binary(let bytes)): elements.appendBigEndian(Int32(0)); elements.append(contentsOf: bytes)
        default: return false
        }
        // Text and bytes: their length is known once written.
        let length = UInt32(elements.count - lengthAt - 4)
        for index in 0..<4 { elements[lengthAt + index] = UInt8(truncatingIfNeeded: length >> (24 - 8 * index)) }
        count += 1
        return true
    }

    /// Appends the whole array, header first.
    func encode(into bytes: inout [UInt8]) {
        bytes.appendBigEndian(Int32(1))
        bytes.appendBigEndian(Int32(hasNull ? 1 : 0))
        bytes.appendBigEndian(kind.oids.element)
        bytes.appendBigEndian(Int32(count))
        bytes.appendBigEndian(Int32(1))
        bytes.append(contentsOf: elements)
    }
}
