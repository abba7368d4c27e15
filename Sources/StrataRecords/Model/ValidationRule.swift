import Foundation

/// A rule a stored attribute's value must satisfy at commit (`StrataError.validation`).
public enum ValidationRule: Sendable {
    /// Numbers (and dates, as seconds since 2001) at least this.
    case minimum(Double)
    /// Numbers (and dates) at most this.
    case maximum(Double)
    /// Strings (in characters) and binaries (in bytes) at least this long.
    case minimumLength(Int)
    /// Strings (in characters) and binaries (in bytes) at most this long.
    case maximumLength(Int)
    /// Strings that match this regular expression (the whole string).
    case pattern(String)
    /// Anything: return a reason to reject the value, or `nil` to accept it.
    case custom(name: String, @Sendable (StoredValue) -> String?)

    /// A stable description, stored with the model (a custom rule by its name).
    var signature: String {
        switch self {
        case .minimum(let minimum): return "min \(minimum)"
        case .maximum(let maximum): return "max \(maximum)"
        case .minimumLength(let n): return "minLength \(n)"
        case .maximumLength(let n): return "maxLength \(n)"
        case .pattern(let pattern): return "pattern \(pattern)"
        case .custom(let name, _): return "custom \(name)"
        }
    }

    /// The words a signature starts with, each followed by one space (``signature``).
    static let signatureKeywords = ["min", "max", "minLength", "maxLength", "pattern", "custom"]

    /// The rules of a `validate` clause of the schema text: ``signature``s joined with ", ".
    /// Returns `nil` when the text holds no such list.
    ///
    /// A pattern or custom name may itself hold ", ", so the text is cut only where ", " is
    /// followed by a keyword and a space, and a piece that then reads as no rule on its own
    /// (`, min x`) goes back to the pattern or name before it. What stays ambiguous is a pattern
    /// or name holding ", " and a whole signature (`a, min 3`): it reads back as two rules
    /// (FORMAT.md §12, "Schema text"). A custom rule comes back by name, accepting every value:
    /// its check is code in the program that wrote the store.
    static func rules(signatures text: Substring) -> [ValidationRule]? {
        var pieces: [Substring] = []
        var start = text.startIndex, from = text.startIndex
        while let comma = text[from...].range(of: ", ") {
            let next = text[comma.upperBound...]
            if signatureKeywords.contains(where: { next.hasPrefix($0 + " ") }) {
                pieces.append(text[start..<comma.lowerBound])
                start = comma.upperBound
            }
            from = comma.upperBound
        }
        pieces.append(text[start...])
        var rules: [ValidationRule] = []
        for piece in pieces {
            if let rule = rule(signature: piece) {
                rules.append(rule)
                continue
            }
            switch rules.last {
            case .pattern(let pattern)?: rules[rules.count - 1] = .pattern(pattern + ", " + piece)
            case .custom(let name, _)?: rules[rules.count - 1] = .custom(name: name + ", " + piece, acceptAll)
            default: return nil
            }
        }
        return rules
    }

    /// The rule one ``signature`` describes, or `nil`.
    static func rule(signature: Substring) -> ValidationRule? {
        guard let space = signature.firstIndex(of: " ") else { return nil }
        let argument = signature[signature.index(after: space)...]
        switch signature[..<space] {
        case "min": return Double(argument).map(ValidationRule.minimum)
        case "max": return Double(argument).map(ValidationRule.maximum)
        case "minLength": return Int(argument).map(ValidationRule.minimumLength)
        case "maxLength": return Int(argument).map(ValidationRule.maximumLength)
        case "pattern": return .pattern(String(argument))
        case "custom": return .custom(name: String(argument), acceptAll)
        default: return nil
        }
    }

    /// The check of a custom rule read back from a file: the program's code is not there.
    private static let acceptAll: @Sendable (StoredValue) -> String? = { _ in nil }

    /// The reason `value` breaks this rule, or `nil`.
    func violation(_ value: StoredValue) -> String? {
        switch self {
        case .minimum(let minimum):
            if let number = value.doubleValue, number < minimum { return "\(value) is below the minimum \(minimum)" }
        case .maximum(let maximum):
            if let number = value.doubleValue, number > maximum { return "\(value) is above the maximum \(maximum)" }
        case .minimumLength(let n):
            if let length = Self.length(value), length < n { return "length \(length) is below the minimum \(n)" }
        case .maximumLength(let n):
            if let length = Self.length(value), length > n { return "length \(length) is above the maximum \(n)" }
        case .pattern(let pattern):
            guard case .string(let string) = value else { return nil }
            guard let regex = try? NSRegularExpression(pattern: "^(?:\(pattern))$") else {
                return "invalid pattern \(pattern)"
            }
            let range = NSRange(string.startIndex..., in: string)
            if regex.firstMatch(in: string, range: range) == nil { return "does not match the pattern \(pattern)" }
        case .custom(_, let check):
            return check(value)
        }
        return nil
    }

    private static func length(_ value: StoredValue) -> Int? {
        switch value {
        case .string(let string): return string.count
        case .binary(let bytes): return bytes.count
        default: return nil
        }
    }
}
