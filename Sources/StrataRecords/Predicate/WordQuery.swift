import StrataStorage

/// The words a user typed, as a word index (``FullTextIndex``) matches them: what a
/// ``TextSearch`` and a `CONTAINSWORDS`/`CONTAINSANYWORD` comparison look for.
///
/// The query is split into words as the index splits values and each is folded as
/// `canonical:` folds; a word written with `*` right after it (`stor*`) stands for every word
/// that begins with it (as bytes of the folded forms, which is what the index's key order
/// gives). Repeated words count once.
struct WordQuery: Hashable, Sendable {
    /// One word of a query: folded, and whether it stands for every word it begins.
    struct Term: Hashable, Sendable {
        var word: String
        var isPrefix: Bool

        /// Whether the folded `word` is this term's word, or begins with it for a prefix.
        func matches(_ word: String) -> Bool {
            isPrefix ? word.utf8.starts(with: self.word.utf8) : word.utf8.elementsEqual(self.word.utf8)
        }
    }

    /// The query's words, each once, in order of first appearance.
    let terms: [Term]
    /// Whether an object must hold every term or one of them.
    let match: TextSearch.Match

    /// The words of `text`. Throws `invalidFetch` when it holds none.
    init(_ text: String, match: TextSearch.Match) throws {
        var terms: [Term] = []
        let folding = WordFolding()
        for chunk in text.split(whereSeparator: { $0.isWhitespace }) {
            var words: [String] = []
            WordTokenizer.forEachWord(String(chunk), folding: folding) { words.append($0) }
            for (i, word) in words.enumerated() {
                let term = Term(word: word, isPrefix: i == words.count - 1 && chunk.hasSuffix("*"))
                if !terms.contains(term) { terms.append(term) }
            }
        }
        guard !terms.isEmpty else { throw StrataError.invalidFetch("'\(text)' holds no word to look for") }
        self.terms = terms
        self.match = match
    }

    /// Whether `texts` (the values of the properties searched, absent ones left out) hold the
    /// query's words: each word is found in some value, or one of them is. A scan's answer,
    /// equal to the index's by construction: the same splitting and folding.
    func matches(_ texts: [String], folding: WordFolding) -> Bool {
        var found = [Bool](repeating: false, count: terms.count)
        var remaining = terms.count
        for text in texts where remaining > 0 {
            WordTokenizer.forEachWord(text, folding: folding) { word in
                guard remaining > 0 else { return }
                for (i, term) in terms.enumerated() where !found[i] && term.matches(word) {
                    found[i] = true
                    remaining -= 1
                }
            }
            if match == .anyWord && remaining < terms.count { return true }
        }
        return match == .allWords ? remaining == 0 : remaining < terms.count
    }
}
