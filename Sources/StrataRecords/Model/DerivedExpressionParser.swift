/// Parses derived expressions: `name`, `list.name`, `lowercase:(name)`, `items.@count`,
/// `items.amount.@sum`, `now()`, `price * quantity - discount`, numeric literals, parentheses.
struct DerivedExpressionParser {
    let text: [Character]
    var at = 0

    static func parse(_ text: String) throws -> DerivedExpression {
        var parser = DerivedExpressionParser(text: Array(text))
        let expression = try parser.sum()
        parser.skipSpaces()
        guard parser.at == parser.text.count else { throw parser.fail("unexpected '\(parser.text[parser.at])'") }
        return expression
    }

    struct Failure: Error { var message: String }

    func fail(_ message: String) -> Failure { Failure(message: "\(message) at character \(at) of \"\(String(text))\"") }

    mutating func skipSpaces() { while at < text.count, text[at].isWhitespace { at += 1 } }

    mutating func sum() throws -> DerivedExpression {
        var lhs = try product()
        while true {
            skipSpaces()
            guard at < text.count, text[at] == "+" || text[at] == "-" else { return lhs }
            let op: DerivedExpression.ArithmeticOperator = text[at] == "+" ? .add : .subtract
            at += 1
            lhs = .arithmetic(op, lhs, try product())
        }
    }

    mutating func product() throws -> DerivedExpression {
        var lhs = try unary()
        while true {
            skipSpaces()
            guard at < text.count, text[at] == "*" || text[at] == "/" else { return lhs }
            let op: DerivedExpression.ArithmeticOperator = text[at] == "*" ? .multiply : .divide
            at += 1
            lhs = .arithmetic(op, lhs, try unary())
        }
    }

    mutating func unary() throws -> DerivedExpression {
        skipSpaces()
        guard at < text.count else { throw fail("expression ends early") }
        if text[at] == "-" {
            at += 1
            return .negate(try unary())
        }
        if text[at] == "(" {
            at += 1
            let inner = try sum()
            try expect(")")
            return inner
        }
        if text[at].isNumber { return try number() }
        return try word()
    }

    mutating func expect(_ character: Character) throws {
        skipSpaces()
        guard at < text.count, text[at] == character else { throw fail("expected '\(character)'") }
        at += 1
    }

    mutating func number() throws -> DerivedExpression {
        let start = at
        while at < text.count, text[at].isNumber || text[at] == "." { at += 1 }
        let digits = String(text[start..<at])
        if let integer = Int64(digits) { return .literal(.int(integer)) }
        if let double = Double(digits) { return .literal(.double(double)) }
        throw fail("bad number '\(digits)'")
    }

    /// A key path (`a.b.@sum`), a function call (`lowercase:(…)`), or `now()`.
    mutating func word() throws -> DerivedExpression {
        let start = at
        while at < text.count,
              text[at].isLetter || text[at].isNumber || text[at] == "_" || text[at] == "." || text[at] == "@" {
            at += 1
        }
        let word = String(text[start..<at])
        guard !word.isEmpty else { throw fail("expected a key path") }
        if at < text.count, text[at] == ":" {
            at += 1
            try expect("(")
            let arg = try sum()
            try expect(")")
            switch word {
            case "lowercase": return .lowercase(arg)
            case "uppercase": return .uppercase(arg)
            case "canonical": return .canonical(arg)
            default: throw fail("unknown function '\(word):'")
            }
        }
        if word == "now" {
            try expect("(")
            try expect(")")
            return .now
        }
        let (parts, aggregate) = KeyPathText.parse(word)
        guard !parts.contains(where: \.isEmpty), aggregate?.isEmpty != true else {
            throw fail("empty key path component in '\(word)'")
        }
        if let aggregate {
            guard let function = AggregateFunction(rawValue: aggregate) else {
                throw fail("unknown aggregate '@\(aggregate)'")
            }
            switch (function, parts.count) {
            case (.count, 1): return .aggregate(.count, relationship: parts[0], attribute: nil)
            case (.count, _): throw fail("@count takes one to-many relationship: 'items.@count'")
            case (_, 2): return .aggregate(function, relationship: parts[0], attribute: parts[1])
            default:
                let name = function.rawValue
                throw fail("@\(name) takes a to-many relationship and an attribute: 'items.amount.@\(name)'")
            }
        }
        guard !parts.contains(where: { $0.hasPrefix("@") }) else { throw fail("an aggregate must end the key path") }
        return .path(parts)
    }
}
