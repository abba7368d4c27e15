import Foundation

// Format strings for predicates: what error messages show, and text that parses back
// (`FetchPredicate(format: p.description) == p`) for every predicate the parser can produce.
// Nested compounds are parenthesised because the parser turns a chain into one n-ary
// compound; kinds without a literal (dates, decimals, UUIDs, bytes) are written as
// `CAST(…, "NSDate")` and friends, the way Core Data prints them.

extension FetchPredicate: CustomStringConvertible {
    /// The predicate as a format string that parses back to an equal predicate.
    ///
    /// Trees the parser never makes are written as an equivalent it does make: an empty
    /// `and` as `TRUEPREDICATE`, an empty `or` as `FALSEPREDICATE`, a one-term compound as
    /// its term.
    public var description: String { formatted.text }

    /// How tightly the text binds: 0 for `OR`, 1 for `AND`, 2 for anything else, so a
    /// parent knows when to wrap a child in parentheses.
    private var formatted: (text: String, binding: Int) {
        switch self {
        case .constant(let value):
            return (value ? "TRUEPREDICATE" : "FALSEPREDICATE", 2)
        case .comparison(let comparison):
            return (comparison.description, 2)
        case .and(let terms):
            return Self.join(terms, with: " AND ", binding: 1, empty: "TRUEPREDICATE")
        case .or(let terms):
            return Self.join(terms, with: " OR ", binding: 0, empty: "FALSEPREDICATE")
        case .not(let operand):
            return ("NOT " + operand.wrapped(unlessBindingAtLeast: 2), 2)
        }
    }

    private static func join(_ terms: [FetchPredicate], with separator: String, binding: Int,
                             empty: String) -> (text: String, binding: Int) {
        if terms.isEmpty { return (empty, 2) }
        if terms.count == 1 { return terms[0].formatted }
        // A child binding exactly as tightly would merge into this chain when parsed back.
        let text = terms.map { $0.wrapped(unlessBindingAtLeast: binding + 1) }.joined(separator: separator)
        return (text, binding)
    }

    private func wrapped(unlessBindingAtLeast binding: Int) -> String {
        let (text, own) = formatted
        return own >= binding ? text : "(" + text + ")"
    }
}

extension Comparison: CustomStringConvertible {
    /// The comparison as a format string: `ANY items.amount >[cd] 5`.
    public var description: String {
        let quantifierText: String
        switch quantifier {
        case .direct: quantifierText = ""
        case .any: quantifierText = "ANY "
        case .all: quantifierText = "ALL "
        case .none: quantifierText = "NONE "
        }
        var optionText = ""
        if !options.isEmpty {
            optionText = "["
            if options.contains(.caseInsensitive) { optionText += "c" }
            if options.contains(.diacriticInsensitive) { optionText += "d" }
            if options.contains(.normalized) { optionText += "n" }
            optionText += "]"
        }
        return "\(quantifierText)\(lhs) \(op.rawValue)\(optionText) \(rhs)"
    }
}

extension FetchExpression: CustomStringConvertible {
    /// The expression as a format string writes it: a literal, `list.name`, `items.@count`,
    /// `{1, 2}`.
    public var description: String {
        switch self {
        case .constant(let value): return Self.literal(value)
        case .keyPath(let path): return Self.keyPathText(path)
        case .aggregate(let function, let path): return Self.keyPathText(path) + ".@" + function.rawValue
        case .list(let elements): return "{" + elements.map(\.description).joined(separator: ", ") + "}"
        case .variable(let name): return "$" + name
        }
    }

    private static func keyPathText(_ path: [String]) -> String {
        path.isEmpty ? "SELF" : path.map(component).joined(separator: ".")
    }

    /// A key written as is when it reads as a name, with `#` when it would read as a keyword
    /// or does not start like a name (`#2nd`). Keys with other characters (spaces, dots)
    /// cannot be written in a format string at all; `%K` is the way to use them.
    private static func component(_ name: String) -> String {
        guard let first = name.unicodeScalars.first,
              name.unicodeScalars.allSatisfy(PredicateSyntax.isIdentifierContinuation)
        else { return name }
        if !PredicateSyntax.isIdentifierStart(first) || PredicateSyntax.keywords.contains(name.uppercased()) {
            return "#" + name
        }
        return name
    }

    static func literal(_ value: StoredValue) -> String {
        switch value {
        case .null: return "nil"
        case .bool(let flag): return flag ? "TRUE" : "FALSE"
        case .int(let integer): return String(integer)
        case .double(let double):
            return double.isFinite ? double.description : "CAST(\"\(double)\", \"NSNumber\")"
        case .decimal(let decimal): return "CAST(\"\(decimal)\", \"NSDecimalNumber\")"
        case .string(let string): return quoted(string)
        case .date(let date):
            let seconds = date.timeIntervalSinceReferenceDate
            return seconds.isFinite ? "CAST(\(seconds), \"NSDate\")" : "CAST(\"\(seconds)\", \"NSDate\")"
        case .uuid(let uuid): return "CAST(\"\(uuid.uuidString)\", \"NSUUID\")"
        case .binary(let bytes):
            let hex = bytes.map { byte -> String in
                let digits = String(byte, radix: 16)
                return byte < 16 ? "0" + digits : digits
            }.joined()
            return "CAST(\"\(hex)\", \"NSData\")"
        }
    }

    /// Double-quoted, escaping what the lexer would otherwise read differently.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\u{" + String(scalar.value, radix: 16) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
