import StrataStorage

/// The postings a write transaction changed in one word index and has not yet written to its
/// tree: per word, the rows whose counts changed, with their new counts or none (the row no
/// longer holds the word). Rows are written to the tree's blocks once per word, at commit or
/// before a read that needs them (decision 87), so a commit rewrites each block it touches
/// once however many of its rows changed.
struct PendingWords {
    /// One row's change to one word's postings, in the order made.
    private struct Change {
        var pk: UInt64
        /// Where the row's counts start in `counts`; -1: the row no longer holds the word.
        var countsAt: Int32
        /// The word's next change (an index in `changes`); -1: none yet.
        var next: Int32
    }

    let fieldCount: Int
    /// Each word's first and last change by slot of the transaction's ``WordVocabulary`` (-1:
    /// none yet): the changes of one word are chained through `Change.next`, so one flat list
    /// holds every word's (a list per word would grow thousands of small arrays a commit) and
    /// no sort is needed to group them.
    private var firstChange: [Int32] = [], lastChange: [Int32] = []
    /// The slots with a change, in the order first changed.
    private var touched: [Int32] = []
    private var changes: [Change] = []
    private var counts: [UInt32] = []

    init(fieldCount: Int) { self.fieldCount = fieldCount }

    var isEmpty: Bool { changes.isEmpty }
    /// Changes recorded (a row's change to one word each).
    var changeCount: Int { changes.count }

    /// Records a row's change from the words of `old` to those of `new` (nil: no row) in the
    /// properties `fields`: a word whose counts stayed the same is not touched.
    mutating func changeRow(_ pk: UInt64, old: [StoredValue]?, new: [StoredValue]?, fields: [Int],
                            vocabulary: WordVocabulary) {
        vocabulary.tally(old: old, new: new, fields: fields)
        let before = vocabulary.before, after = vocabulary.after
        for (n, slot) in after.slots.enumerated() {
            let now = after.counts[(n * fieldCount)..<((n + 1) * fieldCount)]
            if let was = before.counts(of: Int(slot), fieldCount: fieldCount), was.elementsEqual(now) { continue }
            record(Int(slot), pk: pk, counts: now)
        }
        for slot in before.slots where after.counts(of: Int(slot), fieldCount: fieldCount) == nil {
            record(Int(slot), pk: pk, counts: nil)
        }
    }

    /// Records that row `pk` holds `word` `counts` times in each property (nil: not at all);
    /// a later call for the same word and row replaces it.
    mutating func set(_ word: String, pk: UInt64, counts new: [UInt32]?, vocabulary: WordVocabulary) {
        record(vocabulary.slot(of: word), pk: pk, counts: new?[...])
    }

    private mutating func record(_ slot: Int, pk: UInt64, counts new: ArraySlice<UInt32>?) {
        while firstChange.count <= slot {
            firstChange.append(-1)
            lastChange.append(-1)
        }
        let index = Int32(truncatingIfNeeded: changes.count)
        if firstChange[slot] < 0 {
            firstChange[slot] = index
            touched.append(Int32(truncatingIfNeeded: slot))
        } else {
            changes[Int(lastChange[slot])].next = index
        }
        lastChange[slot] = index
        var at: Int32 = -1
        if let new {
            at = Int32(truncatingIfNeeded: counts.count)
            counts.append(contentsOf: new)
        }
        changes.append(Change(pk: pk, countsAt: at, next: -1))
    }

    /// Writes every change into `tree`'s blocks, a word at a time, and forgets them.
    mutating func apply(to tree: WriteTree, name: String, vocabulary: WordVocabulary,
                        targetBytes: Int = PostingBlock.targetBytes) throws {
        var merge = BlockMerge(fieldCount: fieldCount, tree: tree, name: name, targetBytes: targetBytes)
        try forEachWord(vocabulary: vocabulary) { word, changes in try merge.write(word.utf8, changes, counts: counts) }
        removeAll()
    }

    /// Writes every change to `tree` as batch `id` of its recent changes (``WordChanges``),
    /// forgets them, and returns the batch as a reader decodes it (a commit hands it to the
    /// store's ``WordBatchCache``, so no search or merge decodes it again).
    mutating func writeBatch(_ id: UInt64, to tree: WriteTree, vocabulary: WordVocabulary) throws -> WordChanges.Decoded {
        var decoded = WordChanges.Decoded()
        decoded.pks.reserveCapacity(changes.count)
        decoded.countsAt.reserveCapacity(changes.count)
        decoded.counts.reserveCapacity(counts.count)
        forEachWord(vocabulary: vocabulary) { word, changes in
            let start = decoded.wordBytes.count
            decoded.wordBytes.append(contentsOf: word.utf8)
            let first = decoded.pks.count
            for change in changes {
                decoded.pks.append(change.pk)
                guard change.countsAt >= 0 else {
                    decoded.countsAt.append(-1)
                    continue
                }
                decoded.countsAt.append(Int32(truncatingIfNeeded: decoded.counts.count))
                for field in 0..<fieldCount { decoded.counts.append(counts[change.countsAt + field]) }
            }
            decoded.words.append((start..<decoded.wordBytes.count, first..<decoded.pks.count))
        }
        for entry in WordChanges.entries(of: decoded, id: id, fieldCount: fieldCount) {
            try entry.key.withUnsafeBytes { key in try entry.value.withUnsafeBytes { try tree.put(key, $0) } }
        }
        removeAll()
        return decoded
    }

    /// Writes `batches` (the index's recent changes, one decoded batch each, in the order they
    /// apply) and then these changes into `tree`'s blocks, a word at a time in key order, and
    /// forgets these: a merge (decision 96). The batches' words are merged as sorted streams,
    /// so no word is looked up or recorded again; of one row's changes to a word the latest
    /// wins (batch order, these last).
    mutating func apply(after batches: [WordChanges.Decoded], to tree: WriteTree, name: String, vocabulary: WordVocabulary,
                        targetBytes: Int = PostingBlock.targetBytes) throws {
        var merge = BlockMerge(fieldCount: fieldCount, tree: tree, name: name, targetBytes: targetBytes)
        // These changes' words, in key order, each with its rows.
        var own: [(word: [UInt8], changes: [(pk: UInt64, countsAt: Int)])] = []
        forEachWord(vocabulary: vocabulary) { word, changes in own.append((Array(word.utf8), changes)) }
        // Every count in one array: each batch's, then these (offsets moved past those before).
        var allCounts: [UInt32] = []
        allCounts.reserveCapacity(batches.reduce(counts.count) { $0 + $1.counts.count })
        var bases: [Int] = []
        for batch in batches {
            bases.append(allCounts.count)
            allCounts.append(contentsOf: batch.counts)
        }
        let ownBase = allCounts.count
        allCounts.append(contentsOf: counts)
        var heads = [Int](repeating: 0, count: batches.count)
        var ownAt = 0
        var word: [(pk: UInt64, countsAt: Int)] = []
        while true {
            // The smallest word at a head of the streams.
            var smallest: ArraySlice<UInt8>?
            var smallestOwn = false
            for b in batches.indices where heads[b] < batches[b].words.count {
                let candidate = batches[b].word(heads[b])
                if smallest.map({ Self.precedes(candidate, $0) }) ?? true { smallest = candidate }
            }
            let ownBytes: [UInt8] = ownAt < own.count ? own[ownAt].word : []
            if ownAt < own.count, smallest.map({ !Self.precedes($0, ownBytes[...]) }) ?? true {
                smallestOwn = true
            }
            guard smallest != nil || smallestOwn else { break }
            let key: ArraySlice<UInt8> = smallestOwn ? ownBytes[...] : smallest!
            word.removeAll(keepingCapacity: true)
            var sorted = true
            for b in batches.indices where heads[b] < batches[b].words.count && batches[b].word(heads[b]) == key {
                let base = bases[b]
                for c in batches[b].changes(heads[b]) {
                    let pk = batches[b].pks[c], at = Int(batches[b].countsAt[c])
                    if let last = word.last, pk <= last.pk { sorted = false }
                    word.append((pk, at < 0 ? -1 : base + at))
                }
                heads[b] += 1
            }
            if smallestOwn, ownBytes[...] == key {
                for change in own[ownAt].changes {
                    if let last = word.last, change.pk <= last.pk { sorted = false }
                    word.append((change.pk, change.countsAt < 0 ? -1 : ownBase + change.countsAt))
                }
                ownAt += 1
            }
            if !sorted { word = Self.latestPerRow(word) }
            try merge.write(key, word, counts: allCounts)
        }
        removeAll()
    }

    /// Whether `a` sorts strictly before `b`, byte by byte (through raw bytes, not the generic
    /// comparison of two collections).
    private static func precedes(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
        a.withUnsafeBytes { a in b.withUnsafeBytes { b in WordChanges.Reader.ascending(a, b) } }
    }

    /// A word's changes (in the order they were made) by row, each row's last change kept.
    private static func latestPerRow(_ word: [(pk: UInt64, countsAt: Int)]) -> [(pk: UInt64, countsAt: Int)] {
        // A stable order: of one row's changes, the order made breaks the tie.
        let order = word.indices.sorted { word[$0].pk != word[$1].pk ? word[$0].pk < word[$1].pk : $0 < $1 }
        var kept: [(pk: UInt64, countsAt: Int)] = []
        kept.reserveCapacity(word.count)
        for i in order {
            if kept.last?.pk == word[i].pk { kept[kept.count - 1] = word[i] } else { kept.append(word[i]) }
        }
        return kept
    }

    /// Calls `body` with each changed word, in key order, and its changed rows in key order,
    /// each once (a row's last change).
    private func forEachWord(vocabulary: WordVocabulary,
                             _ body: (String, [(pk: UInt64, countsAt: Int)]) throws -> Void) rethrows {
        var word: [(pk: UInt64, countsAt: Int)] = []
        for touchedSlot in vocabulary.inKeyOrder(touched) {
            let slot = Int(touchedSlot)
            word.removeAll(keepingCapacity: true)
            var ascending = true
            var at = Int(firstChange[slot])
            while at >= 0 {
                let change = changes[at]
                if let last = word.last, change.pk <= last.pk { ascending = false }
                word.append((change.pk, Int(change.countsAt)))
                at = Int(change.next)
            }
            if !ascending { word = Self.latestPerRow(word) }
            try body(vocabulary.words[slot], word)
        }
    }

    private mutating func removeAll() {
        changes.removeAll(keepingCapacity: true)
        counts.removeAll(keepingCapacity: true)
        for slot in touched { firstChange[Int(slot)] = -1 }
        touched.removeAll(keepingCapacity: true)
    }
}

/// Merges one word's changed rows into the blocks of its tree: finds the block each change
/// falls in (the last whose first key is not above it; before the first block, the first),
/// decodes it, merges the changes in key order, and writes the result back as blocks of about
/// the target size, deleting an entry whose first key changed or that lost every posting.
private struct BlockMerge {
    let fieldCount: Int
    let tree: WriteTree
    let name: String
    let targetBytes: Int
    private let cursor: Cursor
    // Buffers reused by every block.
    private var prefix: [UInt8] = [], key: [UInt8] = []
    /// The bytes of the block an append grows, kept between words (taken out while in use):
    /// an array per append, allocated, grown and freed, cost more than the append's own work.
    private var appendBuffer: [UInt8] = []

    init(fieldCount: Int, tree: WriteTree, name: String, targetBytes: Int) {
        self.fieldCount = fieldCount
        self.tree = tree
        self.name = name
        self.targetBytes = max(1, targetBytes)
        cursor = tree.makeCursor()
    }

    /// The block of the entry the cursor rests on when it is one of the word's (`prefix`).
    private func blockKey(_ cursor: Cursor) throws -> UInt64? {
        guard cursor.isValid else { return nil }
        let key = cursor.key
        guard key.count == prefix.count + 8 else { return nil }
        for i in prefix.indices where key[i] != prefix[i] { return nil }
        return key.loadBigEndianUInt64(at: prefix.count)  // the length is checked above
    }

    /// Sets `key` to the word's key for a block starting at `pk`.
    private mutating func setKey(_ pk: UInt64) {
        key.removeAll(keepingCapacity: true)
        key.append(contentsOf: prefix)
        KeyEncoding.appendPrimaryKey(pk, to: &key)
    }

    /// `changes`: the word's changed rows, ascending, each once: a row's counts in `counts`
    /// from `countsAt`, or -1 for a row that no longer holds the word.
    mutating func write(_ word: some Collection<UInt8>, _ changes: [(pk: UInt64, countsAt: Int)], counts: [UInt32]) throws {
        prefix.removeAll(keepingCapacity: true)
        prefix.append(contentsOf: word)
        prefix.append(0)
        var i = 0
        while i < changes.count {
            setKey(changes[i].pk)
            // The block the change falls in, and the first key of the block after it.
            var blockStart: UInt64?, upper: UInt64?
            // The cursor ends on that block's entry.
            let found = try key.withUnsafeBytes { try cursor.seek($0) }
            // The word's block the seek landed on (the first at or after the change); nil when
            // it landed past the word's blocks, so the one before is the word's last.
            let landed = found ? try blockKey(cursor) : nil
            if landed == changes[i].pk {
                blockStart = changes[i].pk
            } else if try (found ? cursor.previous() : cursor.last()), let start = try blockKey(cursor) {
                blockStart = start
                // After the word's last block, rows only added: appended (below) without
                // decoding the block.
                if landed == nil, changes[i...].allSatisfy({ $0.countsAt >= 0 }),
                   try append(changes[i...], to: start, counts: counts) {
                    return
                }
            } else if try key.withUnsafeBytes({ try cursor.seek($0) }), let start = try blockKey(cursor) {
                blockStart = start  // before the word's first block: merged into it
            }
            // More changes: those before the next block's first key are this block's.
            if blockStart != nil, i + 1 < changes.count {
                if try cursor.next() { upper = try blockKey(cursor) }
                guard try cursor.isValid ? cursor.previous() : cursor.last() else { throw lost() }
            }
            var end = i + 1
            while end < changes.count, upper.map({ changes[end].pk < $0 }) ?? true { end += 1 }
            // The block is read where it is stored: nothing moves the cursor or changes the
            // tree until it is rewritten.
            let blocks = try rewrite(blockStart, stored: blockStart == nil ? UnsafeRawBufferPointer(start: nil, count: 0) : cursor.value,
                                     changes[i..<end], counts: counts)
            var rest = blocks[...]
            if let blockStart {
                if blocks.first?.first != blockStart {
                    setKey(blockStart)
                    _ = try key.withUnsafeBytes { try tree.delete($0) }
                } else if try blockKey(cursor) == blockStart, let first = rest.popFirst() {
                    // The block keeps its first key: rewritten through the cursor resting on it.
                    try first.bytes.withUnsafeBytes { try tree.replaceValue(at: cursor, with: $0) }
                }
            }
            for block in rest { try put(block.first, block.bytes) }
            i = end
        }
    }

    /// Rows added after every posting of the word's last block (starting at `start`, the
    /// cursor's previous entry): appended to its bytes while it is below the target size, the
    /// rest in new blocks. False (nothing written) when a row is not after the block's last.
    private mutating func append(_ changes: ArraySlice<(pk: UInt64, countsAt: Int)>, to start: UInt64,
                                 counts: [UInt32]) throws -> Bool {
        // The cursor rests on the block.
        var reader = PostingBlockReader(cursor.value, firstKey: start)
        let last = try reader.lastKey(fieldCount: fieldCount, tree: name)
        guard let first = changes.first, first.pk > last else { return false }
        // `PostingBlock.Writer`'s rule (a block ends at the posting that brings it to the
        // target), written out: every word a commit adds rows to takes this path, and a writer's
        // list of blocks per word showed in its cost (decision 87).
        var bytes = appendBuffer
        appendBuffer = []
        defer { appendBuffer = bytes }
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: cursor.value)
        var blockStart = start, changed = false, previous = last
        for change in changes {
            if bytes.count >= targetBytes {
                if changed { try write(blockStart, bytes, grown: start) }
                bytes.removeAll(keepingCapacity: true)
                blockStart = change.pk
            } else {
                RowCodec.appendVarint(&bytes, change.pk - previous)
            }
            for field in 0..<fieldCount { RowCodec.appendVarint(&bytes, UInt64(counts[change.countsAt + field])) }
            changed = true
            previous = change.pk
        }
        try write(blockStart, bytes, grown: start)
        return true
    }

    /// Writes the block starting at `first`: the block the cursor rests on (`grown`, the block
    /// an append grew) through the cursor, which stays on it when the value fits its leaf, so
    /// the next word's seek starts from that leaf; a new block by an ordinary put.
    private mutating func write(_ first: UInt64, _ bytes: [UInt8], grown: UInt64) throws {
        guard first == grown else { return try put(first, bytes) }
        try bytes.withUnsafeBytes { try tree.replaceValue(at: cursor, with: $0) }
    }

    private mutating func put(_ first: UInt64, _ bytes: [UInt8]) throws {
        setKey(first)
        try key.withUnsafeBytes { key in try bytes.withUnsafeBytes { try tree.put(key, $0) } }
    }

    private func lost() -> StrataError {
        StrataError.corrupt("\(name): a block vanished while its word's postings were merged", offset: nil)
    }

    /// The block `stored` (starting at `start`; nil: the word has none) with `changes`
    /// applied, as blocks of about the target size: the counts of a posting no change touched
    /// are copied as stored, not decoded and encoded again.
    private func rewrite(_ start: UInt64?, stored bytes: UnsafeRawBufferPointer,
                         _ changes: ArraySlice<(pk: UInt64, countsAt: Int)>,
                         counts: [UInt32]) throws -> [(first: UInt64, bytes: [UInt8])] {
        var out = PostingBlock.Writer(targetBytes: targetBytes)
        var reader = PostingBlockReader(bytes, firstKey: start ?? 0)
        var stored = start == nil ? nil : try reader.nextCounts(fieldCount: fieldCount, tree: name)
        for change in changes {
            while let range = stored, reader.pk < change.pk {
                out.append(reader.pk, storedCounts: UnsafeRawBufferPointer(rebasing: bytes[range]))
                stored = try reader.nextCounts(fieldCount: fieldCount, tree: name)
            }
            // A stored posting of the changed row is replaced, or removed.
            if stored != nil, reader.pk == change.pk { stored = try reader.nextCounts(fieldCount: fieldCount, tree: name) }
            if change.countsAt >= 0 { out.append(change.pk, counts: counts[change.countsAt..<(change.countsAt + fieldCount)]) }
        }
        while let range = stored {
            out.append(reader.pk, storedCounts: UnsafeRawBufferPointer(rebasing: bytes[range]))
            stored = try reader.nextCounts(fieldCount: fieldCount, tree: name)
        }
        return out.finish()
    }
}
