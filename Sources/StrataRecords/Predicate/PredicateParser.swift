import StrataStorage

extension FetchPredicate {
    /// Parses a Core Data style format string, substituting `arguments` for its placeholders
    /// in order.
    ///
    ///     try FetchPredicate(format: "itemCount > %@ AND searchName BEGINSWITH[cd] %@", 5, "ab")
    ///
    /// `%@` takes a value (an array becomes a list, for `IN`), `%K` a key path held in a
    /// `String`, `%d`/`%i` an integer and `%f` a number. A `nil` argument is `NIL`.
    ///
    /// - Throws: `StrataError.invalidFetch` naming the problem and its character offset: an
    ///   unknown token, an unterminated string, a missing operand, too few or too many
    ///   arguments, an argument of the wrong kind.
    public init(format: String, _ arguments: (any PredicateArgument)?...) throws {
        try self.init(format: format, argumentArray: arguments)
    }

    /// Parses a format string with its arguments in an array, for when they are collected at
    /// run time (like `NSPredicate(format:argumentArray:)`).
    public init(format: String, argumentArray arguments: [(any PredicateArgument)?]) throws {
        var parser = try PredicateParser(format: format, arguments: arguments)
        self = try parser.parse()
    }
}

/// A recursive-descent parser over the lexer's tokens, with the usual precedence:
/// `NOT` binds tighter than `AND`, which binds tighter than `OR`.
///
/// A chain `a AND b AND c` becomes one `.and` of three; parentheses make nesting, so that
/// ``FetchPredicate/description`` (which parenthesises nested compounds) parses back to an equal tree.
struct PredicateParser {
    let source: PredicateSource
    let tokens: [PredicateToken]
    var position = 0
    let arguments: [(any PredicateArgument)?]
    var argumentsUsed = 0

    init(format: String, arguments: [(any PredicateArgument)?]) throws {
        source = PredicateSource(format)
        var lexer = PredicateLexer(source)
        tokens = try lexer.tokens()
        self.arguments = arguments
    }

    mutating func parse() throws -> FetchPredicate {
        let result = try parseOr()
        guard current.kind == .end else { throw error("unexpected \(describe(current))", at: current) }
        if argumentsUsed < arguments.count {
            throw source.error(
                "too many arguments: the format uses \(argumentsUsed) but \(arguments.count) were given",
                at: source.scalars.count)
        }
        return result
    }

    // MARK: Tokens

    var current: PredicateToken { tokens[position] }

    mutating func advance() { if position < tokens.count - 1 { position += 1 } }

    func error(_ message: String, at token: PredicateToken) -> StrataError {
        source.error(message, at: token.offset)
    }

    func describe(_ token: PredicateToken) -> String {
        switch token.kind {
        case .identifier(let name, let escaped): return "'\(escaped ? "#" : "")\(name)'"
        case .aggregate(let name): return "'@\(name)'"
        case .number(let text): return "number \(text)"
        case .string: return "string"
        case .placeholder(let kind): return "'%\(kind)'"
        case .variable(let name): return "'$\(name)'"
        case .symbol(let symbol): return "'\(symbol)'"
        case .end: return "end of format"
        }
    }

    private mutating func take(keyword: String) -> Bool {
        guard current.keyword == keyword else { return false }
        advance()
        return true
    }

    mutating func take(symbol: String) -> Bool {
        guard current.isSymbol(symbol) else { return false }
        advance()
        return true
    }

    mutating func expect(symbol: String, _ what: String) throws {
        guard take(symbol: symbol) else { throw error("expected \(what), found \(describe(current))", at: current) }
    }

    // MARK: Predicates

    private mutating func parseOr() throws -> FetchPredicate {
        var terms = [try parseAnd()]
        while take(keyword: "OR") || take(symbol: "||") { terms.append(try parseAnd()) }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func parseAnd() throws -> FetchPredicate {
        var terms = [try parseNot()]
        while take(keyword: "AND") || take(symbol: "&&") { terms.append(try parseNot()) }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    private mutating func parseNot() throws -> FetchPredicate {
        if take(keyword: "NOT") || take(symbol: "!") { return .not(try parseNot()) }
        return try parsePrimary()
    }

    private mutating func parsePrimary() throws -> FetchPredicate {
        if take(symbol: "(") {
            let inner = try parseOr()
            try expect(symbol: ")", "')'")
            return inner
        }
        if take(keyword: "TRUEPREDICATE") { return .constant(true) }
        if take(keyword: "FALSEPREDICATE") { return .constant(false) }
        return .comparison(try parseComparison())
    }

    private mutating func parseComparison() throws -> Comparison {
        var quantifier = Quantifier.direct
        switch current.keyword {
        case "ANY", "SOME": quantifier = .any
        case "ALL": quantifier = .all
        case "NONE": quantifier = .none
        default: break
        }
        if quantifier != .direct {
            let word = current
            advance()
            let lhsToken = current
            let lhs = try parseExpression()
            guard case .keyPath = lhs else {
                throw error("\(describe(word)) must be followed by a key path", at: lhsToken)
            }
            return try parseRest(lhs: lhs, quantifier: quantifier)
        }
        return try parseRest(lhs: try parseExpression(), quantifier: .direct)
    }

    private mutating func parseRest(lhs: FetchExpression, quantifier: Quantifier) throws -> Comparison {
        guard let op = comparisonOperator() else {
            throw error("expected a comparison operator, found \(describe(current))", at: current)
        }
        let options = try parseOptions()
        let rhsToken = current
        let rhs = try parseExpression()
        if op == .between {
            guard case .list(let bounds) = rhs, bounds.count == 2 else {
                throw error("BETWEEN needs a list of two bounds, as in {1, 10}", at: rhsToken)
            }
        }
        return Self.normalized(Comparison(lhs, op, rhs, quantifier: quantifier, options: options))
    }

    /// Puts the key path on the left of `5 < itemCount`, so that evaluation and index
    /// planning see one shape; only the ordering operators have a mirror image.
    static func normalized(_ comparison: Comparison) -> Comparison {
        guard comparison.quantifier == .direct, case .constant = comparison.lhs else { return comparison }
        switch comparison.rhs {
        case .keyPath, .aggregate: break
        default: return comparison
        }
        let mirrored: ComparisonOperator
        switch comparison.op {
        case .equal: mirrored = .equal
        case .notEqual: mirrored = .notEqual
        case .less: mirrored = .greater
        case .lessOrEqual: mirrored = .greaterOrEqual
        case .greater: mirrored = .less
        case .greaterOrEqual: mirrored = .lessOrEqual
        default: return comparison
        }
        return Comparison(comparison.rhs, mirrored, comparison.lhs, quantifier: .direct, options: comparison.options)
    }

    private mutating func comparisonOperator() -> ComparisonOperator? {
        let op: ComparisonOperator?
        switch current.kind {
        case .symbol("=="), .symbol("="): op = .equal
        case .symbol("!="), .symbol("<>"): op = .notEqual
        case .symbol("<"): op = .less
        case .symbol("<="), .symbol("=<"): op = .lessOrEqual
        case .symbol(">"): op = .greater
        case .symbol(">="), .symbol("=>"): op = .greaterOrEqual
        default:
            switch current.keyword {
            case "IN": op = .in
            case "BETWEEN": op = .between
            case "BEGINSWITH": op = .beginsWith
            case "ENDSWITH": op = .endsWith
            case "CONTAINS": op = .contains
            case "LIKE": op = .like
            case "MATCHES": op = .matches
            case "CONTAINSWORDS": op = .containsWords
            case "CONTAINSANYWORD": op = .containsAnyWord
            default: op = nil
            }
        }
        if op != nil { advance() }
        return op
    }

    /// `[c]`, `[d]`, `[n]` or a combination such as `[cd]`, right after the operator.
    private mutating func parseOptions() throws -> StringOptions {
        guard take(symbol: "[") else { return [] }
        guard case .identifier(let letters, escaped: false) = current.kind else {
            throw error("expected comparison options such as [cd], found \(describe(current))", at: current)
        }
        var options: StringOptions = []
        for (i, letter) in letters.unicodeScalars.enumerated() {
            switch letter {
            case "c", "C": options.insert(.caseInsensitive)
            case "d", "D": options.insert(.diacriticInsensitive)
            case "n", "N": options.insert(.normalized)
            default:
                throw source.error("unknown comparison option '\(letter)' (use c, d or n)", at: current.offset + i)
            }
        }
        advance()
        try expect(symbol: "]", "']' closing the comparison options")
        return options
    }

    // MARK: Expressions

    mutating func parseExpression() throws -> FetchExpression {
        let token = current
        switch token.kind {
        case .number(let text):
            advance()
            return .constant(try number(text, at: token))
        case .string(let text):
            advance()
            return .constant(.string(text))
        case .symbol("{"):
            advance()
            var elements: [FetchExpression] = []
            if take(symbol: "}") { return .list(elements) }
            repeat { elements.append(try parseExpression()) } while take(symbol: ",")
            try expect(symbol: "}", "',' or '}' in the list")
            return .list(elements)
        case .placeholder(let kind):
            advance()
            return try substitute(kind, at: token)
        case .variable(let name):
            advance()
            return .variable(name)
        case .aggregate:
            // `@count` alone is `SELF.@count`.
            return try aggregate(over: [])
        case .identifier(let name, _):
            switch token.keyword {
            case nil:
                advance()
                return try parseKeyPath(from: [name])
            case "TRUE", "YES": advance(); return .constant(.bool(true))
            case "FALSE", "NO": advance(); return .constant(.bool(false))
            case "NIL", "NULL": advance(); return .constant(.null)
            case "SELF": advance(); return try parseKeyPath(from: [])
            case "CAST": advance(); return .constant(try parseCast(at: token))
            default: throw error("expected a value or key path, found keyword \(describe(token))", at: token)
            }
        default:
            throw error("expected a value or key path, found \(describe(token))", at: token)
        }
    }

    /// The rest of a key path after its first part: `.name` components, then optionally one
    /// `.@count`-style aggregate, which must end it.
    mutating func parseKeyPath(from head: [String]) throws -> FetchExpression {
        var path = head
        while take(symbol: ".") {
            switch current.kind {
            case .identifier(let name, _):
                path.append(name)
                advance()
            case .placeholder("K"):
                let token = current
                advance()
                let inserted = try keyPathArgument(at: token)
                guard case .keyPath(let more) = inserted else {
                    throw error("%K after '.' must not name an aggregate", at: token)
                }
                path += more
            case .aggregate:
                return try aggregate(over: path)
            default:
                throw error("expected a key after '.', found \(describe(current))", at: current)
            }
        }
        return .keyPath(path)
    }

    /// The aggregate token at `current`, applied to `path`.
    private mutating func aggregate(over path: [String]) throws -> FetchExpression {
        guard case .aggregate(let name) = current.kind else { return .keyPath(path) }
        guard let function = AggregateFunction(rawValue: name.lowercased()) else {
            throw error("unknown aggregate '@\(name)' (use @count, @sum, @avg, @min or @max)", at: current)
        }
        advance()
        if current.isSymbol(".") { throw error("nothing may follow '@\(name)' in a key path", at: current) }
        return .aggregate(function, path)
    }
}

