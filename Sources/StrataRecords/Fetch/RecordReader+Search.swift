import StrataStorage

extension RecordReader {
    /// The objects that match `search`, best first (``TextSearch``), read from the entity's word
    /// index: the cost follows the entries of the query's words, not the number of objects.
    /// Throws `invalidFetch` for an entity without the word index asked for and for a query
    /// without a word.
    public func search(_ search: TextSearch) throws -> [TextSearchHit] {
        try willScanRows()
        let entity = try self.entity(search.entity)
        let index: Int
        if let properties = search.properties {
            guard let i = entity.fullTextIndexes.firstIndex(of: properties) else {
                throw StrataError.invalidFetch("\(entity.name) has no word index over (\(properties.joined(separator: ", ")))")
            }
            index = i
        } else {
            guard entity.fullTextIndexes.count == 1 else {
                throw StrataError.invalidFetch(entity.fullTextIndexes.isEmpty
                    ? "\(entity.name) has no word index"
                    : "\(entity.name) has \(entity.fullTextIndexes.count) word indexes: name the properties searched")
            }
            index = 0
        }
        let terms = try search.terms()
        if let limit = search.limit, limit < 0 { throw StrataError.invalidFetch("a negative search limit (\(limit))") }
        let tree = RecordTrees.words(entity, index)
        let total = try source.count(RecordTrees.rows(entity))
        // Occurrences per object, per term (a prefix term: of every word it begins).
        var occurrences: [[UInt64: Int]] = []
        for term in terms {
            var counts: [UInt64: Int] = [:]
            let prefix = term.isPrefix ? Array(term.word.utf8) : WordIndex.wordPrefix(term.word)
            try source.scan(tree, prefix: prefix) { key, cursor in
                counts[try WordIndex.primaryKey(key, tree: tree), default: 0] += try WordIndex.count(cursor.value, tree: tree)
                return true
            }
            occurrences.append(counts)
        }
        var candidates: Set<UInt64>
        switch search.match {
        case .allWords:
            let smallest = occurrences.min { $0.count < $1.count }!
            candidates = Set(smallest.keys.filter { pk in occurrences.allSatisfy { $0[pk] != nil } })
        case .anyWord:
            candidates = Set(occurrences.flatMap(\.keys))
        }
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
}
