import StrataStorage

extension RecordReader {
    /// The objects that match `search`, best first (``TextSearch``), read from the entity's word
    /// index: the cost follows the entries of the query's words, not the number of objects.
    /// Throws `invalidFetch` for an entity without the word index asked for and for a query
    /// without a word.
    public func search(_ search: TextSearch) throws -> [TextSearchHit] {
        try willScanRows()
        let entity = try self.entity(search.entity)
        let index: Int, searched: [Bool]
        if let properties = search.properties {
            guard let (position, mask) = entity.wordIndex(covering: properties) else {
                throw StrataError.invalidFetch("\(entity.name) has no word index over (\(properties.joined(separator: ", ")))")
            }
            (index, searched) = (position, mask)
        } else {
            guard entity.fullTextIndexes.count == 1 else {
                throw StrataError.invalidFetch(entity.fullTextIndexes.isEmpty
                    ? "\(entity.name) has no word index"
                    : "\(entity.name) has \(entity.fullTextIndexes.count) word indexes: name the properties searched")
            }
            (index, searched) = (0, [Bool](repeating: true, count: entity.fullTextIndexes[0].count))
        }
        let terms = try search.words().terms
        if let limit = search.limit, limit < 0 { throw StrataError.invalidFetch("a negative search limit (\(limit))") }
        let tree = RecordTrees.words(entity, index)
        let total = try source.count(RecordTrees.rows(entity))
        let occurrences = try wordOccurrences(in: tree, of: terms, searched: searched)
        let candidates = Self.holders(of: occurrences, match: search.match)
        var hits = candidates.map { pk -> TextSearchHit in
            var score = 0.0
            for counts in occurrences {
                if let n = counts[pk] { score += TextSearch.score(occurrences: n, holding: counts.count, total: total) }
            }
            return TextSearchHit(id: ObjectID(entity: entity.name, primaryKey: pk), score: score)
        }
        hits.sort { $0.score != $1.score ? $0.score > $1.score : $0.id.primaryKey < $1.id.primaryKey }
        if let limit = search.limit, hits.count > limit { hits.removeSubrange(limit...) }
        return hits
    }

    /// How often each object holds each term in the properties `searched` marks, from the
    /// entries of word index `tree`: one dictionary per term, by primary key (a prefix term
    /// counts every word it begins).
    func wordOccurrences(in tree: String, of terms: [WordQuery.Term], searched: [Bool]) throws -> [[UInt64: Int]] {
        var occurrences: [[UInt64: Int]] = []
        occurrences.reserveCapacity(terms.count)
        for term in terms {
            var counts: [UInt64: Int] = [:]
            let prefix = term.isPrefix ? Array(term.word.utf8) : WordIndex.wordPrefix(term.word)
            try source.scan(tree, prefix: prefix) { key, cursor in
                let n = try WordIndex.count(cursor.value, searched: searched, tree: tree)
                if n > 0 { counts[try WordIndex.primaryKey(key, tree: tree), default: 0] += n }
                return true
            }
            occurrences.append(counts)
        }
        return occurrences
    }

    /// The objects that hold every term (`allWords`) or one (`anyWord`), given each term's holders.
    static func holders(of occurrences: [[UInt64: Int]], match: TextSearch.Match) -> Set<UInt64> {
        switch match {
        case .allWords:
            guard let smallest = occurrences.min(by: { $0.count < $1.count }) else { return [] }
            return Set(smallest.keys.filter { pk in occurrences.allSatisfy { $0[pk] != nil } })
        case .anyWord:
            return Set(occurrences.flatMap(\.keys))
        }
    }
}
