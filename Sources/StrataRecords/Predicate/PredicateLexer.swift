import StrataStorage

/// Splits a format string into tokens.
struct PredicateLexer {
    private let source: PredicateSource
    private var i = 0

    init(_ source: PredicateSource) { self.source = source }

    private var scalars: [Unicode.Scalar] { source.scalars }

    private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        i + ahead < scalars.count ? scalars[i + ahead] : nil
    }

    mutating func tokens() throws -> [PredicateToken] {
        var result: [PredicateToken] = []
        while true {
            while let scalar = peek(), scalar.properties.isWhitespace { i += 1 }
            let start = i
            guard let scalar = peek() else {
                result.append(PredicateToken(kind: .end, offset: start))
                return result
            }
            let kind = try token(startingWith: scalar, at: start)
            result.append(PredicateToken(kind: kind, offset: start))
        }
    }

    private mutating func token(startingWith scalar: Unicode.Scalar, at start: Int) throws -> PredicateToken.Kind {
        if scalar == "\"" || scalar == "'" { return .string(try quoted(scalar)) }
        if isDigit(scalar) || (scalar == "-" && peek(1).map(isDigit) == true) { return .number(number()) }
        if PredicateSyntax.isIdentifierStart(scalar) { return .identifier(identifier(), escaped: false) }
        switch scalar {
        case "#":
            i += 1
            // After `#` anything name-like is a name, even starting with a digit or spelling a keyword.
            guard let next = peek(), PredicateSyntax.isIdentifierContinuation(next) else {
                throw source.error("expected a name after '#'", at: start)
            }
            return .identifier(identifier(), escaped: true)
        case "@":
            i += 1
            guard let next = peek(), PredicateSyntax.isIdentifierStart(next) else {
                throw source.error("expected an aggregate name after '@'", at: start)
            }
            return .aggregate(identifier())
        case "%":
            return try placeholder(at: start)
        case "$":
            i += 1
            guard let next = peek(), PredicateSyntax.isIdentifierStart(next) else {
                throw source.error("expected a variable name after '$'", at: start)
            }
            return .variable(identifier())
        default:
            break
        }
        for symbol in Self.symbols where matches(symbol) {
            i += symbol.unicodeScalars.count
            return .symbol(symbol)
        }
        throw source.error("unexpected character '\(scalar)'", at: start)
    }

    /// Longest first, so that `<=` is not read as `<` then `=`.
    private static let symbols = [
        "==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||",
        "=", "<", ">", "!", "(", ")", "{", "}", "[", "]", ",", ".",
    ]

    private func matches(_ symbol: String) -> Bool {
        var index = i
        for expected in symbol.unicodeScalars {
            guard index < scalars.count, scalars[index] == expected else { return false }
            index += 1
        }
        return true
    }

    private func isDigit(_ scalar: Unicode.Scalar) -> Bool { scalar >= "0" && scalar <= "9" }

    private func isHexDigit(_ scalar: Unicode.Scalar) -> Bool {
        isDigit(scalar) || (scalar >= "a" && scalar <= "f") || (scalar >= "A" && scalar <= "F")
    }

    private mutating func identifier() -> String {
        var name = String.UnicodeScalarView()
        while let scalar = peek(), PredicateSyntax.isIdentifierContinuation(scalar) {
            name.append(scalar)
            i += 1
        }
        return String(name)
    }

    /// A number's text; validity (range, digits after `0x`) is the parser's to judge, where the
    /// error can say what the number was for.
    private mutating func number() -> String {
        var text = String.UnicodeScalarView()
        func take() { text.append(scalars[i]); i += 1 }
        if peek() == "-" { take() }
        if peek() == "0", let radixLetter = peek(1), "xXoObB".unicodeScalars.contains(radixLetter) {
            take(); take()
            while let scalar = peek(), isHexDigit(scalar) { take() }
            return String(text)
        }
        while let scalar = peek(), isDigit(scalar) { take() }
        if peek() == ".", let next = peek(1), isDigit(next) {
            take()
            while let scalar = peek(), isDigit(scalar) { take() }
        }
        if let exponentMark = peek(), exponentMark == "e" || exponentMark == "E" {
            let signed = peek(1) == "+" || peek(1) == "-"
            if let digit = peek(signed ? 2 : 1), isDigit(digit) {
                take()
                if signed { take() }
                while let scalar = peek(), isDigit(scalar) { take() }
            }
        }
        return String(text)
    }

    private mutating func quoted(_ quote: Unicode.Scalar) throws -> String {
        let start = i
        i += 1
        var text = String.UnicodeScalarView()
        while true {
            guard let scalar = peek() else { throw source.error("unterminated string", at: start) }
            i += 1
            if scalar == quote { return String(text) }
            if scalar != "\\" {
                text.append(scalar)
                continue
            }
            guard let escaped = peek() else { throw source.error("unterminated string", at: start) }
            let escapeStart = i - 1
            i += 1
            switch escaped {
            case "n": text.append("\n")
            case "t": text.append("\t")
            case "r": text.append("\r")
            case "0": text.append("\0")
            case "\\", "\"", "'": text.append(escaped)
            case "u": text.append(try unicodeEscape(at: escapeStart))
            default:
                // Kept as written, so that LIKE (`\*`) and MATCHES (`\d`) patterns need no
                // doubled backslashes; `\\` still means one backslash.
                text.append("\\")
                text.append(escaped)
            }
        }
    }

    /// `\u{1F600}` (1 to 8 hex digits) or `\u00E9` (exactly 4).
    private mutating func unicodeEscape(at start: Int) throws -> Unicode.Scalar {
        var hex = ""
        if peek() == "{" {
            i += 1
            while let scalar = peek(), isHexDigit(scalar) { hex.unicodeScalars.append(scalar); i += 1 }
            guard peek() == "}", (1...8).contains(hex.count) else {
                throw source.error("malformed \\u{…} escape", at: start)
            }
            i += 1
        } else {
            for _ in 0..<4 {
                guard let scalar = peek(), isHexDigit(scalar) else {
                    throw source.error("malformed \\u escape (4 hex digits)", at: start)
                }
                hex.unicodeScalars.append(scalar)
                i += 1
            }
        }
        guard let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else {
            throw source.error("\\u escape is not a Unicode scalar", at: start)
        }
        return scalar
    }

    private mutating func placeholder(at start: Int) throws -> PredicateToken.Kind {
        i += 1
        var spec = ""
        while let scalar = peek(), scalar.properties.isAlphabetic || scalar == "@" {
            spec.unicodeScalars.append(scalar)
            i += 1
            if scalar == "@" || "KdiufF".unicodeScalars.contains(scalar) { break }
        }
        switch spec {
        case "@": return .placeholder("@")
        case "K": return .placeholder("K")
        case "d", "i", "ld", "li", "lld", "lli", "u", "lu", "llu", "hd", "hi": return .placeholder("d")
        case "f", "lf", "F": return .placeholder("f")
        default: throw source.error("unknown placeholder '%\(spec)' (use %@, %K, %d, %i or %f)", at: start)
        }
    }
}

/// The format string being parsed, kept as scalars so that a quote followed by a combining
/// mark is still a quote (as `Character`s they would merge into one grapheme).
struct PredicateSource {
    let text: String
    let scalars: [Unicode.Scalar]

    init(_ text: String) {
        self.text = text
        self.scalars = Array(text.unicodeScalars)
    }

    /// An `invalidFetch` error naming the position as a character offset, which is what a
    /// person counting along the format string sees.
    func error(_ message: String, at scalarOffset: Int) -> StrataError {
        let clamped = min(max(scalarOffset, 0), scalars.count)
        var prefix = String.UnicodeScalarView()
        prefix.append(contentsOf: scalars[..<clamped])
        let characterOffset = String(prefix).count
        return .invalidFetch("predicate format \"\(text)\": \(message) at offset \(characterOffset)")
    }
}

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
