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
    case custom(name: String, @Sendable (Value) -> String?)

    /// A stable description, stored with the model (a custom rule by its name).
    var signature: String {
        switch self {
        case .minimum(let v): return "min \(v)"
        case .maximum(let v): return "max \(v)"
        case .minimumLength(let n): return "minLength \(n)"
        case .maximumLength(let n): return "maxLength \(n)"
        case .pattern(let p): return "pattern \(p)"
        case .custom(let name, _): return "custom \(name)"
        }
    }

    /// The reason `value` breaks this rule, or `nil`.
    func violation(_ value: Value) -> String? {
        switch self {
        case .minimum(let m):
            if let d = value.doubleValue, d < m { return "\(value) is below the minimum \(m)" }
        case .maximum(let m):
            if let d = value.doubleValue, d > m { return "\(value) is above the maximum \(m)" }
        case .minimumLength(let n):
            if let l = Self.length(value), l < n { return "length \(l) is below the minimum \(n)" }
        case .maximumLength(let n):
            if let l = Self.length(value), l > n { return "length \(l) is above the maximum \(n)" }
        case .pattern(let p):
            guard case .string(let s) = value else { return nil }
            guard let regex = try? NSRegularExpression(pattern: "^(?:\(p))$") else { return "invalid pattern \(p)" }
            let range = NSRange(s.startIndex..., in: s)
            if regex.firstMatch(in: s, range: range) == nil { return "does not match the pattern \(p)" }
        case .custom(_, let check):
            return check(value)
        }
        return nil
    }

    private static func length(_ value: Value) -> Int? {
        switch value {
        case .string(let s): return s.count
        case .binary(let b): return b.count
        default: return nil
        }
    }
}
