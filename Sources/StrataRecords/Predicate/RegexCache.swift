import Foundation

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
