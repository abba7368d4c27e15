import StrataStorage

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
