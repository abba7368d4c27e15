import Foundation
import StrataStorage

/// A search of a word index (``FullTextIndex``): the objects of an entity whose indexed values
/// hold all (or any) of the query's words, best first.
///
/// ```swift
/// let hits = try store.read { try $0.search(TextSearch("Note", matching: "cafe stor*")) }
/// ```
///
/// The query is split into words as the index splits values (Unicode word boundaries) and each
/// is folded as `canonical:` folds (so `Café` finds `cafe`, `CAFÉ` and `café`); a word written
/// with `*` right after it (`stor*`) matches every word that begins with it. Results are ranked
/// by BM25 without length normalisation (FORMAT.md §12, "Word indexes", gives the formula):
/// rarer words weigh more, repeats add less and less. Ties in score go in primary-key order.
public struct TextSearch: Sendable, Equatable {
    /// Whether an object must hold every word of the query or one of them.
    public enum Match: Sendable, Equatable {
        /// Every word (a prefix word: at least one word it begins).
        case allWords
        /// At least one word.
        case anyWord
    }

    /// The entity searched.
    public var entity: String
    /// The words to find, as a user types them.
    public var query: String
    /// The word index's properties, in any order; nil: the entity's only word index.
    public var properties: [String]?
    /// Every word, or any.
    public var match: Match
    /// At most this many results (nil: all).
    public var limit: Int?

    /// A search of `entity`'s word index over `properties` (nil: its only one) for `query`.
    public init(_ entity: String, matching query: String, in properties: [String]? = nil,
                match: Match = .allWords, limit: Int? = nil) {
        self.entity = entity
        self.query = query
        self.properties = properties
        self.match = match
        self.limit = limit
    }

    /// The query's words. Throws `invalidFetch` for a query without one.
    func words() throws -> WordQuery { try WordQuery(query, match: match) }

    /// BM25's term saturation (`k1`).
    static let saturation = 1.2

    /// The score of one term in an object: its weight among `total` objects of which `holding`
    /// hold it, for `occurrences` in this one.
    static func score(occurrences: Int, holding: Int, total: Int) -> Double {
        score(occurrences: occurrences, weight: weight(holding: holding, total: total))
    }

    /// A term's weight among `total` objects of which `holding` hold it (BM25's inverse
    /// document frequency): one logarithm per term of a search, not per object.
    static func weight(holding: Int, total: Int) -> Double {
        let n = Double(holding), all = Double(max(total, holding))
        return Foundation.log(1 + (all - n + 0.5) / (n + 0.5))
    }

    /// The score of one term of weight `weight` (``weight(holding:total:)``) in an object that
    /// holds it `occurrences` times.
    @inline(__always)
    static func score(occurrences: Int, weight idf: Double) -> Double {
        let tf = Double(occurrences)
        return idf * tf * (saturation + 1) / (tf + saturation)
    }
}

/// One object a ``TextSearch`` found, with its score.
public struct TextSearchHit: Sendable, Equatable {
    /// The object.
    public let id: ObjectID
    /// Its score: higher is a better match (comparable within one search only).
    public let score: Double
}
