import StrataStorage

extension RecordReader {
    /// The objects that match `search`, best first (``TextSearch``), read from the entity's word
    /// index: the cost follows the entries of the query's words, not the number of objects.
    /// Throws `invalidFetch` for an entity without the word index asked for and for a query
    /// without a word.
    public func search(_ search: TextSearch) throws -> [TextSearchHit] {
        try willScanRows()
        let entity = try self.entity(search.entity)
        if search.properties == nil, entity.fullTextIndexes.count != 1 {
            throw StrataError.invalidFetch(entity.fullTextIndexes.isEmpty
                ? "\(entity.name) has no word index"
                : "\(entity.name) has \(entity.fullTextIndexes.count) word indexes: name the properties searched")
        }
        let properties = search.properties ?? entity.fullTextIndexes[0]
        guard let (index, searched) = entity.wordIndex(covering: properties) else {
            throw StrataError.invalidFetch("\(entity.name) has no word index over (\(properties.joined(separator: ", ")))")
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
            try source.scan(tree, prefix: term.entryPrefix) { key, cursor in
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

    /// The objects that hold the terms of `query` (all, or any) in the properties `searched`
    /// marks, in primary-key order: what a word condition in a fetch needs, without counts.
    /// An exact word's entries come in primary-key order already, so most lists are built by
    /// appending and combined by merging, with no hashing per entry.
    func wordHolders(in tree: String, of query: WordQuery, searched: [Bool]) throws -> [UInt64] {
        var lists: [[UInt64]] = []
        lists.reserveCapacity(query.terms.count)
        for term in query.terms {
            var pks: [UInt64] = []
            var ascending = true
            try source.scan(tree, prefix: term.entryPrefix) { key, cursor in
                guard try WordIndex.count(cursor.value, searched: searched, tree: tree) > 0 else { return true }
                let pk = try WordIndex.primaryKey(key, tree: tree)
                if let last = pks.last, pk <= last { ascending = false }
                pks.append(pk)
                return true
            }
            // A prefix's words each list their holders: one object may be in several.
            if !ascending { pks = Self.sortedUnique(pks) }
            lists.append(pks)
        }
        switch query.match {
        case .allWords:
            lists.sort { $0.count < $1.count }
            var holders = lists[0]
            for other in lists.dropFirst() where !holders.isEmpty {
                var kept: [UInt64] = []
                kept.reserveCapacity(holders.count)
                var j = other.startIndex
                for pk in holders {
                    while j < other.endIndex && other[j] < pk { j += 1 }
                    if j == other.endIndex { break }
                    if other[j] == pk { kept.append(pk) }
                }
                holders = kept
            }
            return holders
        case .anyWord:
            return lists.count == 1 ? lists[0] : Self.sortedUnique(Array(lists.joined()))
        }
    }

    private static func sortedUnique(_ pks: [UInt64]) -> [UInt64] {
        var sorted = pks
        sorted.sort()
        var out: [UInt64] = []
        out.reserveCapacity(sorted.count)
        for pk in sorted where out.last != pk { out.append(pk) }
        return out
    }
}
