/// One token of a predicate format string.
struct PredicateToken: Equatable {
    enum Kind: Equatable {
        /// A name. `escaped` when written with `#` (`#in`), which makes it never a keyword.
        case identifier(String, escaped: Bool)
        /// `@count`, `@sum`, …: the name without the `@`.
        case aggregate(String)
        /// A number as written (sign included): the parser decides int, double or decimal.
        case number(String)
        /// A quoted string, escapes resolved.
        case string(String)
        /// `%@`, `%K`, `%d`/`%i` (`"d"`), `%f` (`"f"`).
        case placeholder(Character)
        /// `$name`: a variable of a prepared fetch, without the `$`.
        case variable(String)
        /// Operators and punctuation: `==`, `(`, `{`, `,`, `.`, `&&`, ….
        case symbol(String)
        case end
    }

    var kind: Kind
    /// Where the token starts, in Unicode scalars of the format (see ``PredicateSource``).
    var offset: Int

    /// The keyword this token spells (upper-cased), or nil. Escaped names are never keywords.
    var keyword: String? {
        guard case .identifier(let name, escaped: false) = kind else { return nil }
        let upper = name.uppercased()
        return PredicateSyntax.keywords.contains(upper) ? upper : nil
    }

    func isSymbol(_ symbol: String) -> Bool { kind == .symbol(symbol) }
}
