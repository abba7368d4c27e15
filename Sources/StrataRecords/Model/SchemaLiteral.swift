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
    static func text(_ v: StoredValue) -> String {
        switch v {
        case .null: return "nil"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return d.description
        case .decimal(let d): return d.description
        case .date(let d): return "date(\(d.timeIntervalSinceReferenceDate.description))"
        case .uuid(let u): return u.uuidString
        case .binary(let b): return "x'" + b.map { String($0, radix: 16).leftPadded(2) }.joined() + "'"
        case .string(let s):
            var out = "\""
            for u in s.unicodeScalars {
                switch u {
                case "\\": out += "\\\\"
                case "\"": out += "\\\""
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                default:
                    if u.value < 0x20 || u.value == 0x7F || u.properties.generalCategory == .lineSeparator || u.properties.generalCategory == .paragraphSeparator || u == "\u{85}" {
                        out += "\\u{\(String(u.value, radix: 16))}"
                    } else {
                        out.unicodeScalars.append(u)
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
            var k = 1
            while k < scalars.count {
                let c = scalars[k]
                if c == "\"" {
                    let rest = text.unicodeScalars.index(text.unicodeScalars.startIndex, offsetBy: k + 1)
                    return (.string(String(out)), Substring(text.unicodeScalars[rest...]))
                }
                if c == "\\" {
                    k += 1
                    guard k < scalars.count else { return nil }
                    switch scalars[k] {
                    case "\\": out.append("\\")
                    case "\"": out.append("\"")
                    case "n": out.append("\n")
                    case "r": out.append("\r")
                    case "t": out.append("\t")
                    case "u":
                        guard k + 1 < scalars.count, scalars[k + 1] == "{", let close = scalars[(k + 2)...].firstIndex(of: "}"),
                              let code = UInt32(String(String.UnicodeScalarView(scalars[(k + 2)..<close])), radix: 16),
                              let scalar = Unicode.Scalar(code) else { return nil }
                        out.append(scalar)
                        k = close
                    default: return nil
                    }
                } else {
                    out.append(c)
                }
                k += 1
            }
            return nil
        case .binary:
            guard text.hasPrefix("x'"), let close = text.dropFirst(2).firstIndex(of: "'") else { return nil }
            let hex = Array(text[text.index(text.startIndex, offsetBy: 2)..<close].utf8)
            guard hex.count % 2 == 0 else { return nil }
            var bytes: [UInt8] = []
            for k in stride(from: 0, to: hex.count, by: 2) {
                guard let b = UInt8(String(decoding: hex[k..<k + 2], as: UTF8.self), radix: 16) else { return nil }
                bytes.append(b)
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
            case .decimal: value = Decimal(string: String(word), locale: Locale(identifier: "en_US_POSIX")).map(StoredValue.decimal)
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
