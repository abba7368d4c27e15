/// The one reader of dotted key paths that may end in an aggregate (`list.name`,
/// `items.amount.@sum`): derived expressions (``DerivedExpressionParser``) and the predicate
/// builder's ``PropertyPath`` both split their text here. Each caller decides what a name it
/// does not know means (a derived expression refuses it; a `PropertyPath` keeps it as a key).
enum KeyPathText {
    /// The text split at dots (empty text: no components), and the name after `@` when the
    /// last component starts with one (that component is then not among `path`).
    static func parse(_ text: String) -> (path: [String], aggregate: String?) {
        if text.isEmpty { return ([], nil) }
        var path = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let last = path.last, last.hasPrefix("@") else { return (path, nil) }
        path.removeLast()
        return (path, String(last.dropFirst()))
    }
}
