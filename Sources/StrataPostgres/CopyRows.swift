import Foundation
import StrataRecords

/// Rows for `COPY … FROM STDIN` in PostgreSQL's text format: a line per row, columns
/// separated by tabs, `\N` for NULL, and a backslash before a backslash, tab, newline or
/// carriage return inside a value. The first copy of a store into emptied tables sends its rows
/// so, where statements would cost the server a parse, a plan and an upsert per row
/// (decision 111).
struct CopyRows {
    private(set) var bytes: [UInt8] = []
    private(set) var rows = 0
    private var columnsInRow = 0

    /// Starts a row.
    mutating func startRow() {
        if rows > 0 || columnsInRow > 0 { bytes.append(UInt8(ascii: "\n")) }
        rows += 1
        columnsInRow = 0
    }

    /// Ends the data (the last line's newline).
    mutating func finish() {
        if rows > 0 { bytes.append(UInt8(ascii: "\n")) }
    }

    private mutating func separate() {
        if columnsInRow > 0 { bytes.append(UInt8(ascii: "\t")) }
        columnsInRow += 1
    }

    /// A key (or NULL).
    mutating func append(key: Int64?) {
        separate()
        if let key { bytes.append(contentsOf: String(key).utf8) } else { appendNull() }
    }

    /// A Strata value as its column's type reads it from text.
    mutating func append(_ value: StoredValue) {
        separate()
        switch value {
        case .null: appendNull()
        case .bool(let flag): bytes.append(flag ? UInt8(ascii: "t") : UInt8(ascii: "f"))
        case .int(let integer): bytes.append(contentsOf: String(integer).utf8)
        case .double(let double):
            // Swift's description reads back as the same double; PostgreSQL spells the
            // specials its own way.
            let text = double.isNaN ? "NaN" : double.isInfinite ? (double < 0 ? "-Infinity" : "Infinity") : "\(double)"
            bytes.append(contentsOf: text.utf8)
        case .decimal(let decimal): bytes.append(contentsOf: (decimal.isNaN ? "NaN" : decimal.description).utf8)
        case .string(let string): appendEscaped(string.utf8)
        case .date(let date):
            // The same microseconds a bound parameter carries (since 2000), spelled in UTC.
            let micros = PostgresTimestamp.microseconds(of: date)
            let text: String
            if micros == PostgresTimestamp.infinity {
                text = "infinity"
            } else if micros == PostgresTimestamp.minusInfinity {
                text = "-infinity"
            } else {
                let (since1970, overflow) = micros.addingReportingOverflow(946_684_800_000_000)
                // Past what 64 bits of microseconds hold: a year the server refuses as out of
                // range, as it refuses the bound parameter of such a date.
                text = overflow ? (micros > 0 ? "300000-01-01 00:00:00+00" : "5000-01-01 00:00:00+00 BC")
                    : Self.timestamp(since1970)
            }
            bytes.append(contentsOf: text.utf8)
        case .uuid(let uuid): bytes.append(contentsOf: uuid.uuidString.utf8)
        case .binary(let data):
            // bytea's hex form; its backslash is escaped for the copy's own text format.
            bytes.append(contentsOf: "\\\\x".utf8)
            let digits = Array("0123456789abcdef".utf8)
            for byte in data {
                bytes.append(digits[Int(byte >> 4)])
                bytes.append(digits[Int(byte & 15)])
            }
        }
    }

    private mutating func appendNull() {
        bytes.append(UInt8(ascii: "\\"))
        bytes.append(UInt8(ascii: "N"))
    }

    private mutating func appendEscaped(_ text: String.UTF8View) {
        for byte in text {
            switch byte {
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            default: bytes.append(byte)
            }
        }
    }

    /// `microseconds` since 1970 as `YYYY-MM-DD HH:MM:SS.ffffff+00` (proleptic Gregorian, the
    /// years PostgreSQL's `timestamptz` holds; before year 1 as `… BC`).
    static func timestamp(_ microseconds: Int64) -> String {
        let (days, rest) = microseconds.quotientAndRemainder(dividingBy: 86_400_000_000)
        var day = days, micros = rest
        if micros < 0 {
            micros += 86_400_000_000
            day -= 1
        }
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = day + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        let seconds = micros / 1_000_000, fraction = micros % 1_000_000
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        // Year 0 is 1 BC, year -1 is 2 BC.
        let (year, era_) = y > 0 ? (y, "") : (1 - y, " BC")
        return "\(pad(year, 4))-\(pad(m, 2))-\(pad(d, 2)) \(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):"
            + "\(pad(seconds % 60, 2)).\(pad(fraction, 6))+00\(era_)"
    }
}
