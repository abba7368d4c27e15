import StrataStorage

extension RecordReader {
    /// The objects that match `search`, best first (``TextSearch``), read from the entity's word
    /// index: the cost follows the postings of the query's words, not the number of objects.
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
        let postings = try termPostings(in: tree, of: terms, searched: searched)
        var top = TopHits(limit: search.limit)
        Self.rank(postings, match: search.match, total: total, into: &top)
        return top.ranked().map { TextSearchHit(id: ObjectID(entity: entity.name, primaryKey: $0.key), score: $0.score) }
    }

    /// Each term's holders in the properties `searched` marks, from the posting blocks of word index
    /// `tree`, in primary-key order with their counts.
    func termPostings(in tree: String, of terms: [WordQuery.Term], searched: [Bool]) throws -> [TermPostings] {
        var postings: [TermPostings] = []
        postings.reserveCapacity(terms.count)
        for term in terms {
            var list = TermPostings()
            try source.scan(tree, prefix: term.entryPrefix) { key, cursor in
                var block = PostingBlockReader(cursor.value, firstKey: try WordIndex.primaryKey(key, tree: tree))
                while let n = try block.next(searched: searched, tree: tree) {
                    if n > 0 { list.append(block.pk, n) }
                }
                return true
            }
            list.normalize()
            postings.append(list)
        }
        return postings
    }

    /// Offers `top` every object that holds all the terms (`allWords`) or one (`anyWord`), with
    /// its score: the terms' scores summed in the query's order. One merge of the terms' lists
    /// in key order: no table of holders, no hashing per entry.
    static func rank(_ postings: [TermPostings], match: TextSearch.Match, total: Int, into top: inout TopHits) {
        guard !postings.isEmpty else { return }
        let weights = postings.map { TextSearch.weight(holding: $0.keys.count, total: total) }
        if postings.count == 1 {
            // One term (most queries): its holders are the matches, in order already.
            let list = postings[0], weight = weights[0]
            for i in list.keys.indices {
                top.offer(score: TextSearch.score(occurrences: list.counts[i], weight: weight), key: list.keys[i])
            }
            return
        }
        var at = [Int](repeating: 0, count: postings.count)
        while true {
            // The smallest key at the head of a list.
            var key = UInt64.max, found = false
            for t in postings.indices where at[t] < postings[t].keys.count {
                let head = postings[t].keys[at[t]]
                if !found || head < key { key = head; found = true }
            }
            guard found else { return }
            var score = 0.0, held = 0
            for t in postings.indices where at[t] < postings[t].keys.count && postings[t].keys[at[t]] == key {
                score += TextSearch.score(occurrences: postings[t].counts[at[t]], weight: weights[t])
                held += 1
                at[t] += 1
            }
            if match == .anyWord || held == postings.count { top.offer(score: score, key: key) }
            // Every term's holders are needed: once a list runs out, no later key holds them all.
            if match == .allWords, postings.indices.contains(where: { at[$0] == postings[$0].keys.count }) { return }
        }
    }

    /// The objects that hold the terms of `query` (all, or any) in the properties `searched`
    /// marks, in primary-key order: what a word condition in a fetch needs, without counts.
    /// An exact word's blocks come in primary-key order already, so most lists are built by
    /// appending and combined by merging, with no hashing per posting.
    func wordHolders(in tree: String, of query: WordQuery, searched: [Bool]) throws -> [UInt64] {
        var lists: [[UInt64]] = []
        lists.reserveCapacity(query.terms.count)
        for term in query.terms {
            var pks: [UInt64] = []
            var ascending = true
            try source.scan(tree, prefix: term.entryPrefix) { key, cursor in
                var block = PostingBlockReader(cursor.value, firstKey: try WordIndex.primaryKey(key, tree: tree))
                while let n = try block.next(searched: searched, tree: tree) {
                    guard n > 0 else { continue }
                    if let last = pks.last, block.pk <= last { ascending = false }
                    pks.append(block.pk)
                }
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
