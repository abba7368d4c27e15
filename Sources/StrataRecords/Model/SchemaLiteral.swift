import Foundation

/// Default values in the schema text (FORMAT.md §12, "Schema text"): one token per value that
/// never contains a line break, so the text stays one line per fact, and that reads back as
/// the same value.
///
/// | type | literal |
/// |---|---|
/// | bool | `true`, `false` |
/// | int16/32/64 | decimal digits, `-` for negatives |
/// | double | the shortest digits that read back as the same double (Swift's `description`: `0.1`, `1e-05`, `-0.0`) |
/// | decimal | its digits (`Decimal.description`: `-12.345`) |
/// | string | `"…"` with `\\`, `\"`, `\n`, `\r`, `\t` and `\u{X}` (hex) for other control characters |
/// | date | `date(S)`, S the seconds since 2001-01-01 as a double literal |
/// | uuid | the 36-character form, upper case |
/// | binary | `x'…'`, two lower-case hex digits per byte |
enum SchemaLiteral {
    static func text(_ value: StoredValue) -> String {
        switch value {
        case .null: return "nil"
        case .bool(let flag): return flag ? "true" : "false"
        case .int(let integer): return String(integer)
        case .double(let double): return double.description
        case .decimal(let decimal): return decimal.description
        case .date(let date): return "date(\(date.timeIntervalSinceReferenceDate.description))"
        case .uuid(let uuid): return uuid.uuidString
        case .binary(let bytes): return "x'" + bytes.map { String($0, radix: 16).leftPadded(2) }.joined() + "'"
        case .string(let string):
            var out = "\""
            for scalar in string.unicodeScalars {
                switch scalar {
                case "\\": out += "\\\\"
                case "\"": out += "\\\""
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                default:
                    if scalar.value < 0x20 || scalar.value == 0x7F
                        || scalar.properties.generalCategory == .lineSeparator
                        || scalar.properties.generalCategory == .paragraphSeparator || scalar == "\u{85}" {
                        out += "\\u{\(String(scalar.value, radix: 16))}"
                    } else {
                        out.unicodeScalars.append(scalar)
                    }
                }
            }
            return out + "\""
        }
    }

    /// Reads the literal at the start of `text` as a value of `type`; returns it and the rest of
    /// the text, or nil when the text does not hold one.
    static func parse(_ text: Substring, as type: AttributeType) -> (StoredValue, Substring)? {
        switch type {
        case .string:
            let scalars = Array(text.unicodeScalars)
            guard scalars.first == "\"" else { return nil }
            var out = String.UnicodeScalarView()
            var i = 1
            while i < scalars.count {
                let scalar = scalars[i]
                if scalar == "\"" {
                    let rest = text.unicodeScalars.index(text.unicodeScalars.startIndex, offsetBy: i + 1)
                    return (.string(String(out)), Substring(text.unicodeScalars[rest...]))
                }
                if scalar == "\\" {
                    i += 1
                    guard i < scalars.count else { return nil }
                    switch scalars[i] {
                    case "\\": out.append("\\")
                    case "\"": out.append("\"")
                    case "n": out.append("\n")
                    case "r": out.append("\r")
                    case "t": out.append("\t")
                    case "u":
                        guard i + 1 < scalars.count, scalars[i + 1] == "{",
                              let close = scalars[(i + 2)...].firstIndex(of: "}"),
                              let code = UInt32(String(String.UnicodeScalarView(scalars[(i + 2)..<close])), radix: 16),
                              let decoded = Unicode.Scalar(code) else { return nil }
                        out.append(decoded)
                        i = close
                    default: return nil
                    }
                } else {
                    out.append(scalar)
                }
                i += 1
            }
            return nil
        case .binary:
            guard text.hasPrefix("x'"), let close = text.dropFirst(2).firstIndex(of: "'") else { return nil }
            let hex = Array(text[text.index(text.startIndex, offsetBy: 2)..<close].utf8)
            guard hex.count % 2 == 0 else { return nil }
            var bytes: [UInt8] = []
            for i in stride(from: 0, to: hex.count, by: 2) {
                guard let byte = UInt8(String(decoding: hex[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
                bytes.append(byte)
            }
            return (.binary(bytes), text[text.index(after: close)...])
        case .date:
            guard text.hasPrefix("date("), let close = text.firstIndex(of: ")"),
                  let seconds = Double(text[text.index(text.startIndex, offsetBy: 5)..<close]) else { return nil }
            return (.date(Date(timeIntervalSinceReferenceDate: seconds)), text[text.index(after: close)...])
        default:
            let word = text.prefix { $0 != " " }
            let rest = text[word.endIndex...]
            let value: StoredValue?
            switch type {
            case .bool: value = word == "true" ? .bool(true) : (word == "false" ? .bool(false) : nil)
            case .int16, .int32, .int64: value = Int64(word).map(StoredValue.int)
            case .double: value = Double(word).map(StoredValue.double)
            case .decimal:
                let posix = Locale(identifier: "en_US_POSIX")
                value = Decimal(string: String(word), locale: posix).map(StoredValue.decimal)
            case .uuid: value = UUID(uuidString: String(word)).map(StoredValue.uuid)
            default: value = nil
            }
            return value.map { ($0, rest) }
        }
    }
}

private extension String {
    func leftPadded(_ n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}
