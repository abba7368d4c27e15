/// Words with a meaning of their own in a format string; a key named like one of them is
/// written `#name` (as in `NSPredicate`).
enum PredicateSyntax {
    static let keywords: Set<String> = [
        "AND", "OR", "NOT", "IN", "BETWEEN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES",
        "ANY", "SOME", "ALL", "NONE", "TRUE", "FALSE", "YES", "NO", "NIL", "NULL",
        "TRUEPREDICATE", "FALSEPREDICATE", "SELF", "CAST",
    ]

    static func isIdentifierStart(_ u: Unicode.Scalar) -> Bool {
        u == "_" || u.properties.isAlphabetic
    }

    static func isIdentifierContinuation(_ u: Unicode.Scalar) -> Bool {
        if u == "_" || u.properties.isAlphabetic { return true }
        switch u.properties.generalCategory {
        case .decimalNumber, .nonspacingMark, .spacingMark: return true
        default: return false
        }
    }
}
