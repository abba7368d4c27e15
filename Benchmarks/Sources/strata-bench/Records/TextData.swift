import Foundation

/// The text workloads' corpus, the same in every engine: notes of a title (3 words) and a body
/// (24 words) drawn from 2,000 made-up words with a Zipf-like skew (a few words common, most
/// rare, as in prose). Words are letters only, a third with diacritics and some capitalised, so
/// every engine's tokenizer splits them alike and folding has work (SQLite FTS5's `unicode61
/// remove_diacritics 2` and Strata's `canonical:` agree on them).
enum TextData {
    static let syllables = ["ka", "re", "mi", "to", "lu", "sa", "ne", "vo", "di", "pé", "ül", "än", "co", "ra", "bé",
                            "go", "fi", "mö", "tä", "zu"]

    /// The corpus's words, made from the seed.
    static let words: [String] = {
        var g = SplitMix64(seed: 0x7E47_0001)
        var seen = Set<String>()
        var out: [String] = []
        while out.count < 2_000 {
            let n = 2 + Int(g.next() % 3)
            var word = (0..<n).map { _ in syllables[Int(g.next() % UInt64(syllables.count))] }.joined()
            if g.next() % 5 == 0 { word = word.prefix(1).uppercased() + word.dropFirst() }
            // Distinct after folding, so every engine counts the same distinct words.
            let key = word.lowercased().folding(options: [.diacriticInsensitive], locale: nil)
            if seen.insert(key).inserted { out.append(word) }
        }
        return out
    }()

    /// A word's index, skewed: the square of a uniform draw puts most draws on the first words.
    private static func draw(_ g: inout SplitMix64) -> String {
        let u = g.unit()
        return words[min(words.count - 1, Int(u * u * u * Double(words.count)))]
    }

    /// A note's title and body.
    typealias Note = (title: String, body: String)

    /// Notes `0..<count` (``note(_:revision:)``), made once before a workload's timing starts:
    /// making a note's text costs about as much as one engine's insert of it, and timed it
    /// was added to both engines' times alike.
    static func notes(_ count: Int) -> [Note] { (0..<count).map { note($0) } }

    /// Note `i`'s title and body; `revision` > 0 gives another body (the update workload).
    static func note(_ i: Int, revision: Int = 0) -> (title: String, body: String) {
        var g = SplitMix64(seed: RecordsData.mix(0x7E47_0002 &+ UInt64(revision), UInt64(i)))
        let title = (0..<3).map { _ in draw(&g) }.joined(separator: " ")
        let body = (0..<24).map { _ in draw(&g) }.joined(separator: " ") + "."
        return (title, body)
    }

    /// Queries: one or two words (all must match), a third of them with the last one a prefix
    /// (its first three letters and `*`).
    static func queries(_ count: Int, seed: UInt64) -> [String] {
        var g = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            var parts = (0..<(1 + Int(g.next() % 2))).map { _ in draw(&g) }
            if g.next() % 3 == 0 { parts[parts.count - 1] = String(parts[parts.count - 1].prefix(3)) + "*" }
            return parts.joined(separator: " ")
        }
    }

    /// Words whose note counts the digest sums (every engine must find the same notes).
    static var probeWords: [String] { (0..<50).map { words[$0 * 37 % words.count] } }

    /// Results each query returns at most, ranked: what a search box shows.
    static let resultsShown = 20
}
