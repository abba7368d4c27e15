/// Words with a meaning of their own in a format string; a key named like one of them is
/// written `#name` (as in `NSPredicate`).
enum PredicateSyntax {
    static let keywords: Set<String> = [
        "AND", "OR", "NOT", "IN", "BETWEEN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES",
        "CONTAINSWORDS", "CONTAINSANYWORD",
        "ANY", "SOME", "ALL", "NONE", "TRUE", "FALSE", "YES", "NO", "NIL", "NULL",
        "TRUEPREDICATE", "FALSEPREDICATE", "SELF", "CAST",
    ]

    static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar.properties.isAlphabetic
    }

    static func isIdentifierContinuation(_ scalar: Unicode.Scalar) -> Bool {
        if scalar == "_" || scalar.properties.isAlphabetic { return true }
        switch scalar.properties.generalCategory {
        case .decimalNumber, .nonspacingMark, .spacingMark: return true
        default: return false
        }
    }
}
