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
        let batches = try recentBatches(tree, fieldCount: searched.count)
        for term in terms {
            var list = TermPostings()
            if batches.isEmpty {
                // The blocks as stored: the scan's closure, inlined with the loop per posting.
                try source.scan(tree, prefix: term.entryPrefix) { key, cursor in
                    var block = PostingBlockReader(cursor.value, firstKey: try WordIndex.primaryKey(key, tree: tree))
                    try Self.addPostings(&block, searched: searched, tree: tree, into: &list)
                    return true
                }
            } else {
                try changedPostings(in: tree, of: term, searched: searched, batches: batches, into: &list)
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
        let batches = try recentBatches(tree, fieldCount: searched.count)
        for term in query.terms {
            var holders = HolderList()
            if batches.isEmpty {
                try source.scan(tree, prefix: term.entryPrefix) { key, cursor in
                    var block = PostingBlockReader(cursor.value, firstKey: try WordIndex.primaryKey(key, tree: tree))
                    try Self.addPostings(&block, searched: searched, tree: tree, into: &holders)
                    return true
                }
            } else {
                try changedPostings(in: tree, of: term, searched: searched, batches: batches, into: &holders)
            }
            var pks = holders.keys
            // A prefix's words each list their holders: one object may be in several.
            if !holders.ascending { pks = Self.sortedUnique(pks) }
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

    /// The batches of recent changes word index `tree` holds (``WordChanges``), decoded, in the
    /// order they apply: empty for most indexes. A snapshot finds their ids once per tree and
    /// takes each committed batch from the store's ``WordBatchCache`` (handed over by the commit
    /// that wrote it, or decoded by the first search that met it); a write transaction reads its
    /// ids afresh (its flushes add batches) and decodes its own batches without keeping them.
    func recentBatches(_ tree: String, fieldCount: Int) throws -> [WordChanges.Decoded] {
        let ids: [UInt64]
        let ownTransaction: UInt64?
        // Made at most once, and only when a batch must be read: most searches take every batch
        // from the cache.
        var cursor: Cursor?
        switch source {
        case .read:
            if let known = batchIDs[tree] {
                ids = known
            } else {
                guard let made = try source.cursor(tree) else { return [] }
                cursor = made
                ids = try WordChanges.batchIDs(made, tree: tree)
                batchIDs[tree] = ids
            }
            ownTransaction = nil
        case .write(let tx):
            guard let made = try source.cursor(tree) else { return [] }
            cursor = made
            ids = try WordChanges.batchIDs(made, tree: tree)
            ownTransaction = tx.transactionID
        }
        var batches: [WordChanges.Decoded] = []
        batches.reserveCapacity(ids.count)
        for id in ids {
            let committed = WordChanges.transaction(ofBatch: id) != ownTransaction
            if committed, let kept = wordBatches?.batch(tree: tree, id: id) {
                batches.append(kept)
                continue
            }
            if cursor == nil { cursor = try source.cursor(tree) }
            guard let reader = cursor else { return [] }
            let decoded = try WordChanges.Decoded.read(batch: id, reader, name: tree, fieldCount: fieldCount)
            if committed { wordBatches?.keep(decoded, tree: tree, id: id) }
            batches.append(decoded)
        }
        return batches
    }

    /// The postings of the words `term` matches that count occurrences in the properties
    /// `searched` marks, with the index's `batches` of recent changes applied over the blocks
    /// (a row's latest change replaces its posting, or removes it): each word's in key order,
    /// the words in no particular order.
    func changedPostings<Sink: PostingSink>(in tree: String, of term: WordQuery.Term, searched: [Bool],
                                            batches: [WordChanges.Decoded], into out: inout Sink) throws {
        guard term.isPrefix else {
            return try changedPostings(in: tree, ofWord: term, searched: searched, batches: batches, into: &out)
        }
        // Each matching word's changes, batch after batch (occurrences in the searched
        // properties, 0: held only elsewhere, -1: no longer held); sorted by row below, the
        // latest change of a row kept.
        var changed: [[UInt8]: [(pk: UInt64, n: Int)]] = [:]
        let wanted = Array(term.word.utf8)
        for batch in batches {
            for w in batch.words(matching: wanted, prefix: term.isPrefix) {
                let rows = batch.changes(w)
                changed[Array(batch.word(w)), default: []].append(contentsOf: rows.lazy.map { (batch.pks[$0], batch.occurrences($0, searched: searched)) })
            }
        }
        for word in Array(changed.keys) where changed[word]!.count > 1 {
            changed[word] = Self.latestPerRow(changed[word]!)
        }
        guard let cursor = try source.cursor(tree) else { return }
        // The blocks, word by word, each word's changes merged in key order. A cursor loop, not
        // a scan's closure: locals a closure captured and mutated were checked for exclusive
        // access at every posting.
        let entryPrefix = term.entryPrefix
        var pending: [(pk: UInt64, n: Int)] = []
        var at = 0
        var currentWord: [UInt8] = []
        var ok = try cursor.seek(entryPrefix)
        while ok {
            let key = cursor.key
            guard Self.startsWith(key, entryPrefix), key.count >= 9 else { break }
            let first = try WordIndex.primaryKey(key, tree: tree)
            let word = UnsafeRawBufferPointer(rebasing: key[..<(key.count - 9)])
            if currentWord.isEmpty || word.count != currentWord.count || !Self.startsWith(word, currentWord) {
                while at < pending.count {
                    if pending[at].n > 0 { out.add(pending[at].pk, pending[at].n) }
                    at += 1
                }
                currentWord = Array(word)
                pending = changed.removeValue(forKey: currentWord) ?? []
                at = 0
            }
            var block = PostingBlockReader(cursor.value, firstKey: first)
            // The block's postings as stored, at the speed of a search without batches; read
            // again with the changes merged in only when one falls within it (most changes are
            // new rows, past a word's last block).
            let start = out.count
            try Self.addPostings(&block, searched: searched, tree: tree, into: &out)
            if at < pending.count, pending[at].pk <= block.pk {
                out.removeLast(out.count - start)
                block = PostingBlockReader(cursor.value, firstKey: first)
                try Self.mergePostings(&block, changes: pending, at: &at, searched: searched, tree: tree, into: &out)
            }
            ok = try cursor.next()
        }
        while at < pending.count {
            if pending[at].n > 0 { out.add(pending[at].pk, pending[at].n) }
            at += 1
        }
        // Words only the changes hold.
        for rows in changed.values {
            for (pk, n) in rows where n > 0 { out.add(pk, n) }
        }
    }

    /// ``changedPostings(in:of:searched:batches:into:)`` for an exact word (most terms): its
    /// changes in one array, its blocks read with no comparison of words.
    private func changedPostings<Sink: PostingSink>(in tree: String, ofWord term: WordQuery.Term, searched: [Bool],
                                                    batches: [WordChanges.Decoded], into out: inout Sink) throws {
        var changes: [(pk: UInt64, n: Int)] = []
        let wanted = Array(term.word.utf8)
        for batch in batches {
            let found = batch.words(matching: wanted, prefix: false)
            guard let w = found.first else { continue }
            let rows = batch.changes(w)
            changes.reserveCapacity(changes.count + rows.count)
            for c in rows { changes.append((batch.pks[c], batch.occurrences(c, searched: searched))) }
        }
        if changes.count > 1 { changes = Self.latestPerRow(changes) }
        guard let cursor = try source.cursor(tree) else { return }
        let entryPrefix = term.entryPrefix
        var at = 0
        var ok = try cursor.seek(entryPrefix)
        while ok {
            let key = cursor.key
            guard Self.startsWith(key, entryPrefix) else { break }
            var block = PostingBlockReader(cursor.value, firstKey: try WordIndex.primaryKey(key, tree: tree))
            // As stored, at the speed of a search without batches; read again with the changes
            // merged in only when one falls within the block (most are new rows, past it).
            let start = out.count
            try Self.addPostings(&block, searched: searched, tree: tree, into: &out)
            if at < changes.count, changes[at].pk <= block.pk {
                out.removeLast(out.count - start)
                block = PostingBlockReader(cursor.value, firstKey: try WordIndex.primaryKey(key, tree: tree))
                try Self.mergePostings(&block, changes: changes, at: &at, searched: searched, tree: tree, into: &out)
            }
            ok = try cursor.next()
        }
        while at < changes.count {
            if changes[at].n > 0 { out.add(changes[at].pk, changes[at].n) }
            at += 1
        }
    }

    /// Whether `key` begins with `prefix`, compared as bytes (decision 98).
    @inline(__always)
    static func startsWith(_ key: UnsafeRawBufferPointer, _ prefix: [UInt8]) -> Bool {
        guard key.count >= prefix.count else { return false }
        return prefix.withUnsafeBufferPointer { p in
            var i = 0
            while i < p.count {
                if key[i] != p[i] { return false }
                i += 1
            }
            return true
        }
    }

    /// `rows` (changes in the order they were made) sorted by row, each row's latest change kept.
    private static func latestPerRow(_ rows: [(pk: UInt64, n: Int)]) -> [(pk: UInt64, n: Int)] {
        var ascending = true
        for i in rows.indices.dropFirst() where rows[i].pk <= rows[i - 1].pk {
            ascending = false
            break
        }
        guard !ascending else { return rows }
        // A stable sort by row: of one row's changes, the last made stays last.
        let order = rows.indices.sorted { rows[$0].pk != rows[$1].pk ? rows[$0].pk < rows[$1].pk : $0 < $1 }
        var kept: [(pk: UInt64, n: Int)] = []
        kept.reserveCapacity(rows.count)
        for i in order {
            if kept.last?.pk == rows[i].pk { kept[kept.count - 1] = rows[i] } else { kept.append(rows[i]) }
        }
        return kept
    }

    /// Adds the postings of `block` with occurrences in the properties `searched` marks, with
    /// `changes` (by row, from `at`) merged in: a change replaces its row's posting (or drops it,
    /// with occurrences 0 or -1), rows only the changes hold come in key order.
    private static func mergePostings<Sink: PostingSink>(_ block: inout PostingBlockReader, changes: [(pk: UInt64, n: Int)],
                                                         at: inout Int, searched: [Bool], tree: String,
                                                         into out: inout Sink) throws {
        while let n = try block.next(searched: searched, tree: tree) {
            let pk = block.pk
            if at < changes.count, changes[at].pk <= pk {
                while at < changes.count, changes[at].pk < pk {
                    if changes[at].n > 0 { out.add(changes[at].pk, changes[at].n) }
                    at += 1
                }
                if at < changes.count, changes[at].pk == pk {
                    if changes[at].n > 0 { out.add(pk, changes[at].n) }
                    at += 1
                    continue
                }
            }
            if n > 0 { out.add(pk, n) }
        }
    }

    /// Adds the postings of `block` with occurrences in the properties `searched` marks: the
    /// loop every search runs per posting, inlined into each caller (decision 98).
    @inline(__always)
    private static func addPostings<Sink: PostingSink>(_ block: inout PostingBlockReader, searched: [Bool], tree: String,
                                                       into out: inout Sink) throws {
        while let n = try block.next(searched: searched, tree: tree) {
            if n > 0 { out.add(block.pk, n) }
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

/// Where ``RecordReader/changedPostings(in:of:searched:batches:into:)`` puts each posting it
/// finds (occurrences above 0): a generic parameter, so each caller's loop is specialised, with
/// no closure or intermediate array per posting.
protocol PostingSink {
    /// Postings added so far.
    var count: Int { get }
    mutating func add(_ pk: UInt64, _ occurrences: Int)
    /// Forgets the last `n` postings added.
    mutating func removeLast(_ n: Int)
}

extension TermPostings: PostingSink {
    var count: Int { keys.count }
    @inline(__always) mutating func add(_ pk: UInt64, _ occurrences: Int) { append(pk, occurrences) }

    /// (Whether the keys ascend stays as it was: false only makes `normalize()` sort.)
    mutating func removeLast(_ n: Int) {
        keys.removeLast(n)
        counts.removeLast(n)
    }
}

/// The holders of a word condition's term, and whether they came in ascending key order.
struct HolderList: PostingSink {
    var keys: [UInt64] = []
    var ascending = true

    var count: Int { keys.count }

    @inline(__always)
    mutating func add(_ pk: UInt64, _ occurrences: Int) {
        if let last = keys.last, pk <= last { ascending = false }
        keys.append(pk)
    }

    /// (`ascending` stays as it was: false only makes the caller sort, which is never wrong.)
    mutating func removeLast(_ n: Int) { keys.removeLast(n) }
}
