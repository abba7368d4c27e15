/// A JSON value, rendered with keys in the order given (stable output for scripts and diffs)
/// and `null` for absent values rather than missing keys. Small enough that the tool needs no
/// Foundation.
indirect enum JSON {
    case object([(String, JSON)])
    case array([JSON])
    case string(String)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case bool(Bool)
    case null

    /// Pretty-printed with two-space indentation.
    func rendered(indent: Int = 0) -> String {
        let pad = String(repeating: "  ", count: indent + 1)
        let closePad = String(repeating: "  ", count: indent)
        switch self {
        case .object(let fields):
            if fields.isEmpty { return "{}" }
            let body = fields.map { "\(pad)\(JSON.quote($0.0)): \($0.1.rendered(indent: indent + 1))" }
            return "{\n" + body.joined(separator: ",\n") + "\n\(closePad)}"
        case .array(let items):
            if items.isEmpty { return "[]" }
            let body = items.map { pad + $0.rendered(indent: indent + 1) }
            return "[\n" + body.joined(separator: ",\n") + "\n\(closePad)]"
        case .string(let string): return JSON.quote(string)
        case .int(let integer): return String(integer)
        case .uint(let integer): return String(integer)
        case .double(let double): return double.isFinite ? fixed(double, 2) : "null"
        case .bool(let bool): return bool ? "true" : "false"
        case .null: return "null"
        }
    }

    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hexDigits = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hexDigits.count) + hexDigits
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
