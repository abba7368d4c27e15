import Foundation
import StrataStorage

/// `MATCHES` patterns: ICU regular expressions (`NSRegularExpression`) that must match the
/// whole string, as `NSPredicate` requires.
enum RegexPattern {
    /// Compiles `pattern` anchored at both ends. The pattern is first compiled alone, so that
    /// a malformed one is reported as written rather than as its anchored wrapping.
    static func compile(_ pattern: String, caseInsensitive: Bool) throws -> NSRegularExpression {
        let options: NSRegularExpression.Options = caseInsensitive ? [.caseInsensitive] : []
        do {
            _ = try NSRegularExpression(pattern: pattern, options: options)
            // `\A…\z` rather than `^…$`: `$` would also accept a trailing newline, and the group
            // keeps an alternation (`a|ab`) from trying only its first branch at the end.
            return try NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z", options: options)
        } catch {
            throw StrataError.invalidFetch(
                "MATCHES pattern \(FetchExpression.quoted(pattern)) is not a valid regular expression")
        }
    }

    static func matches(_ regex: NSRegularExpression, _ text: String) -> Bool {
        regex.firstMatch(in: text, options: [], range: NSRange(location: 0, length: text.utf16.count)) != nil
    }
}

/// Regular expressions compiled for patterns that come from the evaluated objects (a key path
/// on the right of `MATCHES`), kept per evaluator so that nothing global is mutable.
struct RegexCache {
    private struct Key: Hashable {
        let pattern: String
        let caseInsensitive: Bool
    }

    private var entries: [Key: NSRegularExpression] = [:]
    /// Patterns taken from data can all differ; past this many the cache starts over rather
    /// than growing with the number of rows.
    private static let capacity = 256

    mutating func regex(_ pattern: String, caseInsensitive: Bool) throws -> NSRegularExpression {
        let key = Key(pattern: pattern, caseInsensitive: caseInsensitive)
        if let regex = entries[key] { return regex }
        let regex = try RegexPattern.compile(pattern, caseInsensitive: caseInsensitive)
        if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
        entries[key] = regex
        return regex
    }
}
