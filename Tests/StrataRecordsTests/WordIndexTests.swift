import Foundation
import Testing
import StrataStorage
@testable import StrataRecords

/// Word indexes (`FullTextIndex`) and `TextSearch`: the word rules, the entries the commit
/// keeps, and searches answered through the index against the same search by a scan of the rows.
@Suite struct WordIndexTests {
    @Test func wordsFollowUnicodeBoundariesAndFoldAsCanonical() {
        let cases: [(String, [String])] = [
            ("Don't stop—the Café's 3.14 e.g. x86_64 MP3!", ["don't", "stop", "the", "cafe's", "3.14", "e.g", "x86_64", "mp3"]),
            ("1,000.50 a,b end.", ["1,000.50", "a", "b", "end"]),
            ("東京タワーへ行く", ["東", "京", "タワー", "へ", "行", "く"]),
            ("ΣΊΣΥΦΟΣ Ölçü naïve", ["σισυφοσ", "olcu", "naive"]),
            ("  ", []),
            ("e\u{301}te\u{301}", ["ete"]),
        ]
        for (text, expected) in cases {
            #expect(WordTokenizer.words(text) == expected, "\(text)")
        }
        let long = String(repeating: "ab", count: 150)
        #expect(WordTokenizer.words(long).first?.utf8.count == WordTokenizer.maximumWordBytes)
    }

    /// ASCII text takes a path of its own (bytes, lowercased): on every kind of ASCII character,
    /// in random runs, it splits and folds exactly as the general path (scalars, `canonical:`).
    @Test func asciiTextSplitsAsTheGeneralPathDoes() {
        let alphabet = Array("aZ09'.,;_ -!?\"()\n\tQx7:/@#$%&*+=<>[]{}|~`^")
        var rng = SplitMix64(seed: 29)
        for round in 0..<5_000 {
            let length = rng.below(40)
            let text = String((0..<length).map { _ in alphabet[rng.below(alphabet.count)] })
                + (round % 50 == 0 ? String(repeating: "W", count: 230) : "")
            var fast: [String] = [], general: [String] = []
            WordTokenizer.forEachWord(text, folding: WordFolding()) { fast.append($0) }
            WordTokenizer.forEachWord(scalars: Array(text.unicodeScalars), folding: WordFolding()) { general.append($0) }
            #expect(fast == general, "seed 29 round \(round): \(text.debugDescription)")
        }
    }

    /// Every path (ASCII text, ASCII words in other text, words looked up in the memory of
    /// folded words, scalars classified by the Latin table or by their properties) gives the
    /// words of the reference: the same boundaries, each word folded by `canonical:` and cut.
    @Test func everyPathFoldsAsCanonicalDoes() {
        let alphabet: [Unicode.Scalar] = ["a", "Z", "0", "7", "'", ".", ",", "_", " ", "-", "\u{E9}", "\u{C9}", "\u{FC}",
                                          "\u{E4}", "\u{F6}", "\u{DF}", "\u{141}", "\u{17E}", "\u{1C5}", "\u{24F}",
                                          "\u{250}", "\u{301}", "\u{2019}", "\u{B7}", "\u{200D}", "\u{3A3}", "\u{6771}",
                                          "\u{30BF}", "\u{3078}", "\u{BD}", "\u{D7}", "\u{A0}", "\u{1F600}"]
        let seed: UInt64 = 0xF01D_2
        var rng = SplitMix64(seed: seed)
        let folding = WordFolding()
        for round in 0..<5_000 {
            let text = String(String.UnicodeScalarView((0..<rng.below(60)).map { _ in
                // Mostly ASCII letters, as text is.
                rng.below(3) == 0 ? alphabet[rng.below(alphabet.count)] : Unicode.Scalar(UInt8(0x61 + rng.below(26)))
            }))
            let scalars = Array(text.unicodeScalars)
            var expected: [String] = []
            WordTokenizer.segment(scalars, kindOf: WordTokenizer.kind) { range in
                expected.append(WordFolding.fold(String(String.UnicodeScalarView(scalars[range]))))
            }
            var found: [String] = []
            WordTokenizer.forEachWord(text, folding: folding) { found.append($0) }
            #expect(found == expected, "seed \(seed) round \(round): \(text.debugDescription)")
        }
    }

    /// Latin text takes a path on its UTF-8 bytes (``WordTokenizer/forEachLatinWord(_:_:)``):
    /// on random runs of ASCII, Latin-1 and Latin-extension letters, digits, every mid-word
    /// character (the two-byte middle dot among them), separators and spellings past the cut, the
    /// spellings it finds, folded, are the general path's words; text with a scalar from U+0240 on
    /// is left to the general path, and nothing else is.
    @Test func latinTextSplitsAsTheGeneralPathDoes() {
        let alphabet: [Unicode.Scalar] = ["a", "Z", "0", "7", "'", ".", ",", ";", "_", " ", "-", "!", "\u{E9}", "\u{C9}",
                                          "\u{FC}", "\u{DF}", "\u{F8}", "\u{E6}", "\u{D0}", "\u{FE}", "\u{AA}", "\u{B5}",
                                          "\u{141}", "\u{17E}", "\u{1C5}", "\u{23F}", "\u{B7}", "\u{BD}", "\u{B2}",
                                          "\u{D7}", "\u{A0}", "\u{AD}", "\u{240}", "\u{24F}", "\u{2B0}", "\u{301}",
                                          "\u{2019}", "\u{3A3}", "\u{6771}"]
        let seed: UInt64 = 0x1A71_4
        var rng = SplitMix64(seed: seed)
        var latinTexts = 0
        for round in 0..<6_000 {
            var scalars = (0..<rng.below(50)).map { _ in
                rng.below(3) == 0 ? alphabet[rng.below(alphabet.count)] : Unicode.Scalar(UInt8(0x61 + rng.below(26)))
            }
            if round % 40 == 0 { scalars += Array(repeating: rng.below(2) == 0 ? "W" : "\u{E9}", count: 130 + rng.below(200)) }
            let text = String(String.UnicodeScalarView(scalars))
            var general: [String] = []
            WordTokenizer.forEachWord(scalars: scalars, folding: WordFolding()) { general.append($0) }
            var found: [String] = []
            let latin = WordTokenizer.forEachLatinWord(text) { found.append(WordTokenizer.foldedLatinWord($0)) }
            #expect(latin == scalars.allSatisfy { $0.value < 0x240 }, "seed \(seed) round \(round): \(text.debugDescription)")
            guard latin else { continue }
            latinTexts += 1
            #expect(found == general, "seed \(seed) round \(round): \(text.debugDescription)")
        }
        #expect(latinTexts > 1_000)
    }

    /// A vocabulary tallies a row's words by either path (Latin spellings by their bytes, other
    /// text by its scalars), with spellings new and met before: every row's slots name the words
    /// of the reference (``WordTokenizer/words(_:)`` per field), with their counts per field.
    @Test func vocabularyTalliesAsTheWordsOfEachField() {
        // Spellings of 201–255 bytes are cut when folded and still remembered, then met again.
        let pieces = ["café", "Cafe", "CAFÉ", "Straße", "strasse", "naïve", "Łódź", "x86", "3.14", "don't", "l·l",
                      String(repeating: "W", count: 230), String(repeating: "Ä", count: 115),
                      "e\u{301}te", "東京", "タワー", "ΣΊΣΥΦΟΣ", "ǅemal", "ɐ", String(repeating: "é", count: 140),
                      String(repeating: "q", count: 300), "Ünïcode", "unicode", "½", "a_b"]
        let separators = [" ", ", ", ". ", "—", "\u{A0}", "\n", "'"]
        let seed: UInt64 = 0x1A71_5
        var rng = SplitMix64(seed: seed)
        let vocabulary = WordVocabulary()
        for round in 0..<2_000 {
            let row: [StoredValue] = (0..<3).map { field in
                if field == 2, rng.below(4) == 0 { return .null }
                return .string((0..<rng.below(12)).map { _ in
                    pieces[rng.below(pieces.count)] + separators[rng.below(separators.count)]
                }.joined())
            }
            vocabulary.tally(old: nil, new: row, fields: [0, 1, 2])
            var expected: [String: [UInt32]] = [:]
            for field in 0..<3 {
                guard case .string(let text) = row[field] else { continue }
                for word in WordTokenizer.words(text) { expected[word, default: [0, 0, 0]][field] += 1 }
            }
            var found: [String: [UInt32]] = [:]
            for slot in vocabulary.after.slots {
                found[vocabulary.words[Int(slot)]] = Array(vocabulary.after.counts(of: Int(slot), fieldCount: 3) ?? [])
            }
            #expect(found == expected, "seed \(seed) round \(round): \(row)")
        }
    }

    /// A commit's words in key order: a vocabulary's slots, ranked and too new to be, come in
    /// the byte order of their words (duplicates kept), as a batch of recent changes must list them.
    @Test func wordsComeInKeyOrder() {
        var rng = SplitMix64(seed: 0x1A71_7)
        let vocabulary = WordVocabulary()
        for round in 0..<200 {
            // New words every round, so some slots are ranked and some not yet.
            for _ in 0..<(1 + rng.below(40)) {
                _ = vocabulary.slot(of: String((0..<(1 + rng.below(6))).map { _ in Character(Unicode.Scalar(UInt8(0x61 + rng.below(5)))) }))
            }
            let slots = (0..<rng.below(60)).map { _ in Int32(rng.below(vocabulary.words.count)) }
            let ordered = vocabulary.inKeyOrder(slots)
            #expect(ordered.sorted() == slots.sorted(), "seed 0x1A717 round \(round)")
            #expect(zip(ordered, ordered.dropFirst()).allSatisfy {
                !vocabulary.words[Int($1)].utf8.lexicographicallyPrecedes(vocabulary.words[Int($0)].utf8)
            }, "seed 0x1A717 round \(round)")
        }
    }

    /// A word index's batches of recent changes read as FORMAT.md says, by the reference
    /// decoder: after every commit of a seeded run (inserts, rewrites, deletes; small and large
    /// transactions), every change entry decodes, its key names its batch and first word, each
    /// batch's words ascend, batch ids are new ones above every earlier batch's (never given
    /// twice), fewer than 8 batches are held, and the blocks with the batches applied in id
    /// order hold exactly the postings of the rows' words. The run sees batches pile up and be
    /// merged away.
    @Test func recentChangesReadAsTheDocumentSays() throws {
        let seed: UInt64 = 0xBA7C_4
        var rng = SplitMix64(seed: seed)
        let store = try makeStore(try Self.model())
        var ids: [ObjectID] = []
        var sawBatches = false, sawMerged = false
        // Every batch id seen, and those held after the round before (which may be seen again).
        var seenBatches: Set<UInt64> = [], batchesBefore: Set<UInt64> = []
        for round in 0..<40 {
            var heldNow: Set<UInt64> = []
            try store.write { tx in
                let inserts = round % 13 == 12 ? 400 : 1 + rng.below(6)
                for _ in 0..<inserts {
                    ids.append(try tx.insert("Note", ["title": Self.text(&rng, words: 1 + rng.below(3)), "body": Self.text(&rng, words: rng.below(10))]))
                }
                for _ in 0..<rng.below(4) where !ids.isEmpty {
                    try tx.update(ids[rng.below(ids.count)], ["body": Self.text(&rng, words: rng.below(8))])
                }
                if rng.below(3) == 0, !ids.isEmpty { try tx.delete(ids.remove(at: rng.below(ids.count))) }
            }
            try store.storage.read { tx in
                let tree = try #require(try tx.tree("words:Note:title,body"))
                var postings: [[UInt8]: [UInt64: [UInt32]]] = [:]
                var batch: UInt64 = 0, lastWord: [UInt8] = [], batches = 0
                for (key, value) in try tree.entries() {
                    guard let parsed = ReferenceFormat.WordChanges.parseKey(key) else {
                        let first = key.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                        for posting in try #require(ReferenceFormat.PostingBlock.decode(value, firstKey: first, fieldCount: 2)) {
                            postings[Array(key.dropLast(9)), default: [:]][posting.key] = posting.counts
                        }
                        continue
                    }
                    if parsed.batch != batch {
                        #expect(parsed.batch > batch, "seed \(seed) round \(round)")
                        #expect(!seenBatches.contains(parsed.batch) || batchesBefore.contains(parsed.batch),
                                "seed \(seed) round \(round): batch \(parsed.batch) given again")
                        seenBatches.insert(parsed.batch)
                        heldNow.insert(parsed.batch)
                        batch = parsed.batch
                        batches += 1
                        lastWord = []
                    }
                    let words = try #require(ReferenceFormat.WordChanges.decode(value, fieldCount: 2), "seed \(seed) round \(round)")
                    #expect(words.first?.word == parsed.firstWord)
                    for word in words {
                        #expect(lastWord.lexicographicallyPrecedes(word.word), "seed \(seed) round \(round)")
                        lastWord = word.word
                        for change in word.changes { postings[word.word, default: [:]][change.key] = change.counts }
                    }
                }
                #expect(batches < WordChanges.batchesBeforeMerge, "seed \(seed) round \(round)")
                if batches > 0 { sawBatches = true } else { sawMerged = true }
                batchesBefore = heldNow
                // Each batch as its commit handed it to the store equals the batch read back.
                for id in heldNow {
                    let kept = try #require(store.wordBatches.batch(tree: "words:Note:title,body", id: id),
                                            "seed \(seed) round \(round): batch \(id) not kept by its commit")
                    let read = try WordChanges.Decoded.read(batch: id, tree.makeCursor(), name: "words:Note:title,body", fieldCount: 2)
                    #expect(Self.listing(kept) == Self.listing(read), "seed \(seed) round \(round): batch \(id)")
                }
                // Batches merged away are forgotten by the commit that merged them.
                #expect(store.wordBatches.count(tree: "words:Note:title,body") == heldNow.count, "seed \(seed) round \(round)")
                var expected: [[UInt8]: [UInt64: [UInt32]]] = [:]
                let rows = try #require(try tx.tree("rows:Note"))
                for (key, _) in try rows.entries() {
                    let pk = key.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                    let values = try #require(try store.read { try $0.values(of: ObjectID(entity: "Note", primaryKey: pk)) })
                    for (field, name) in ["title", "body"].enumerated() {
                        guard case .string(let text)? = values[name] else { continue }
                        for word in WordTokenizer.words(text) {
                            expected[Array(word.utf8), default: [:]][pk, default: [0, 0]][field] += 1
                        }
                    }
                }
                #expect(postings.filter { !$0.value.isEmpty } == expected, "seed \(seed) round \(round)")
            }
        }
        #expect(sawBatches && sawMerged)
        #expect(try store.read { try $0.checkRecords() }.isEmpty)
        try store.close()
    }

    /// A decoded batch as plain values: each word's bytes with its changes (row, counts or nil).
    static func listing(_ batch: WordChanges.Decoded) -> [[UInt8]: [String]] {
        var out: [[UInt8]: [String]] = [:]
        for w in batch.words.indices {
            out[Array(batch.word(w))] = batch.changes(w).map { c in
                let at = Int(batch.countsAt[c])
                return "\(batch.pks[c]):" + (at < 0 ? "-" : "\(batch.counts[at]),\(batch.counts[at + 1])")
            }
        }
        return out
    }

    /// Decoded batches are shared by every reader of the store (decision 98) and stay right:
    /// snapshots held across later commits and merges answer as a scan of their own rows does;
    /// a write transaction that searched its own batch and rolled back leaves nothing behind,
    /// though the next transaction is given its ID and writes other words under the same
    /// batch id.
    @Test func decodedBatchesServeEverySnapshotAlike() throws {
        let seed: UInt64 = 0xBA7C_5
        var rng = SplitMix64(seed: seed)
        let store = try makeStore(try Self.model())
        var held: [RecordSnapshot] = []
        var compared = 0
        func compare(_ reader: RecordReader, _ context: String) throws {
            for _ in 0..<4 {
                var query = [Self.vocabulary[rng.below(Self.vocabulary.count)]]
                if rng.below(3) == 0 { query[0] = String(query[0].prefix(2)) + "*" }
                let search = TextSearch("Note", matching: query.joined(separator: " "), in: ["title", "body"])
                #expect(try reader.search(search) == (try Self.scanSearch(reader, search, fields: ["title", "body"])),
                        "seed \(seed) \(context): \(search)")
                let request = FetchRequest("Note", predicate: try FetchPredicate(format: "title CONTAINSWORDS %@", query[0]))
                var scan = request
                scan.usesIndexes = false
                #expect(try reader.fetch(request) == (try reader.fetch(scan)), "seed \(seed) \(context): \(request.predicate!)")
                compared += 1
            }
        }
        for round in 0..<24 {
            if round % 5 == 4 {
                // Searched inside, then rolled back: its batch is decoded but never kept.
                let before = try store.storage.read { $0.transactionID }
                struct Abandon: Error {}
                #expect(throws: Abandon.self) {
                    try store.write { tx in
                        _ = try tx.insert("Note", ["title": "zygote zebra", "body": Self.text(&rng, words: 4)])
                        _ = try tx.search(TextSearch("Note", matching: "zygote", in: ["title", "body"]))
                        throw Abandon()
                    }
                }
                #expect(try store.storage.read { $0.transactionID } == before)
            }
            try store.write { tx in
                // Now and then a commit whose batch runs over several entries.
                for _ in 0..<(round % 7 == 3 ? 80 : 1 + rng.below(4)) {
                    _ = try tx.insert("Note", ["title": Self.text(&rng, words: 1 + rng.below(3)), "body": Self.text(&rng, words: rng.below(8))])
                }
                let notes = try tx.objects("Note")
                if rng.below(2) == 0, !notes.isEmpty {
                    try tx.update(notes[rng.below(notes.count)], ["title": Self.text(&rng, words: 1 + rng.below(3))])
                }
                if rng.below(4) == 0, !notes.isEmpty { try tx.delete(notes[rng.below(notes.count)]) }
            }
            #expect(try store.read { try $0.search(TextSearch("Note", matching: "zygote", in: ["title", "body"])) }.isEmpty,
                    "seed \(seed) round \(round): a rolled-back batch was read")
            try store.read { try compare($0, "round \(round)") }
            if rng.below(3) == 0 { held.append(try store.snapshot()) }
            for (i, snapshot) in held.enumerated() { try compare(snapshot.reader, "round \(round), snapshot \(i)") }
            if held.count > 3 { held.removeFirst().close() }
        }
        #expect(store.wordBatches.count() > 0, "seed \(seed): no batch was kept")
        #expect(compared > 24 * 8)
        for snapshot in held { snapshot.close() }
        #expect(try store.read { try $0.checkRecords() }.isEmpty)
        try store.close()
    }

    /// A merge that throws part way (a damaged block of a word the batches change) keeps every
    /// batch: a caller that catches the error and commits loses no change, and once the block
    /// is mended the index agrees with the rows.
    @Test func aMergeThatThrowsKeepsItsBatches() throws {
        let store = try makeStore(try Self.model())
        let tree = "words:Note:title,body"
        _ = try store.write { tx in try tx.insert("Note", ["title": "alpha", "body": "omega"]) }
        // Seven more commits merge alpha into its block; seven after them leave seven batches
        // (each changing alpha), and the next flush merges.
        for n in 1...14 { _ = try store.write { tx in try tx.insert("Note", ["title": "alpha", "body": "zeta \(n)"]) } }
        let held = try store.read { try $0.recentBatches(tree, fieldCount: 2) }.count
        #expect(held == 7)
        // Damage alpha's block (a word every batch changes): the merge throws on reaching it.
        let alpha = try #require(try store.storage.read { tx in
            try tx.tree(tree)!.entries().first { $0.key.starts(with: Array("alpha".utf8) + [0]) }
        })
        try store.storage.write { tx in try tx.tree(tree, createIfMissing: false)!.put(alpha.key, [0xFF, 0xFF]) }
        var searchThrew = false
        do {
            try store.write { tx in
                _ = try tx.insert("Note", ["title": "beta", "body": nil as String?])
                do {
                    _ = try tx.search(TextSearch("Note", matching: "beta", in: ["title", "body"]))  // flushes: the merge
                } catch StrataError.corrupt {
                    searchThrew = true
                }
            }
        } catch StrataError.corrupt {
            // The commit's own flush met the damaged block again: nothing committed.
        }
        #expect(searchThrew)
        // Whether or not that commit went through, the batches are all still there.
        #expect(try store.read { try $0.recentBatches(tree, fieldCount: 2) }.count >= held)
        try store.storage.write { tx in try tx.tree(tree, createIfMissing: false)!.put(alpha.key, alpha.value) }
        #expect(try store.read { try $0.checkRecords() }.isEmpty)
        #expect(try store.read { try $0.search(TextSearch("Note", matching: "zeta", in: ["title", "body"])) }.count == 14)
        try store.close()
    }

    /// A batch id above the one a flush would take (a forged entry): the flush merges instead of
    /// writing a batch that would apply before it, so the later change still wins.
    @Test func aFlushBelowAHeldBatchIdMerges() throws {
        let store = try makeStore(try Self.model())
        let tree = "words:Note:title,body"
        let id = try store.write { tx in try tx.insert("Note", ["title": "cafe", "body": nil as String?]) }
        // A batch far in the future saying the note holds "cafe" (as it does now).
        let next = try store.storage.read { $0.transactionID } + 1
        let forged = ReferenceFormat.WordChanges.key(batch: (next + 100) << 16, firstWord: Array("cafe".utf8))
        try store.storage.write { tx in
            try tx.tree(tree, createIfMissing: false)!.put(forged, ReferenceFormat.WordChanges.encode(
                [.init(word: Array("cafe".utf8), changes: [.init(key: id.primaryKey, counts: [1, 0])])]))
        }
        try store.write { tx in try tx.update(id, ["title": "tea"]) }
        #expect(try store.read { try $0.search(TextSearch("Note", matching: "cafe", in: ["title", "body"])) }.isEmpty)
        #expect(try store.read { try $0.recentBatches(tree, fieldCount: 2) }.isEmpty)
        #expect(try store.read { try $0.checkRecords() }.isEmpty)
        try store.close()
    }

    /// Batch ids: the transaction's ID × 65,536 plus the flush's number, ascending across
    /// transactions, none past the last flush number or for a transaction ID that would overflow.
    @Test func batchIdsAscendAndAreNeverShared() {
        #expect(WordChanges.batchID(transaction: 7, flush: 0) == 7 << 16)
        #expect(WordChanges.batchID(transaction: 7, flush: 65_535) == (7 << 16) + 65_535)
        #expect(WordChanges.batchID(transaction: 7, flush: 65_536) == nil)
        #expect(WordChanges.batchID(transaction: 7, flush: -1) == nil)
        #expect(WordChanges.batchID(transaction: 0, flush: 0) == nil)
        #expect(WordChanges.batchID(transaction: UInt64.max >> 16, flush: 0) == nil)
        #expect(WordChanges.batchID(transaction: (UInt64.max >> 16) - 1, flush: 65_535) != nil)
        #expect(WordChanges.batchID(transaction: 8, flush: 0)! > WordChanges.batchID(transaction: 7, flush: 65_535)!)
        #expect(WordChanges.transaction(ofBatch: WordChanges.batchID(transaction: 9, flush: 12)!) == 9)
    }

    /// The store's cache of decoded batches keeps at most its bound of changes, dropping the
    /// oldest ids first; a reader's decode never replaces a kept batch, the committing writer's
    /// does; forgetting drops a tree's batches up to an id.
    @Test func decodedBatchesAreBoundedOldestFirst() {
        func batch(_ changes: Int, word: String) -> WordChanges.Decoded {
            var decoded = WordChanges.Decoded()
            decoded.wordBytes = Array(word.utf8)
            decoded.pks = (0..<changes).map { UInt64($0 + 1) }
            decoded.countsAt = [Int32](repeating: -1, count: changes)
            decoded.words = [(0..<decoded.wordBytes.count, 0..<changes)]
            return decoded
        }
        let cache = WordBatchCache(changeBound: 10)
        cache.keep(batch(4, word: "a"), tree: "t", id: 30)
        cache.keep(batch(4, word: "b"), tree: "t", id: 10)
        cache.keep(batch(2, word: "c"), tree: "u", id: 20)
        #expect(cache.count() == 3)
        cache.keep(batch(3, word: "d"), tree: "t", id: 40)  // 13 changes: id 10 goes
        #expect(cache.batch(tree: "t", id: 10) == nil && cache.count() == 3)
        cache.keep(batch(11, word: "e"), tree: "t", id: 50)  // past the bound alone: not kept
        #expect(cache.batch(tree: "t", id: 50) == nil && cache.count() == 3)
        cache.keep(batch(1, word: "x"), tree: "t", id: 30)  // a reader's decode: the kept one stays
        #expect(cache.batch(tree: "t", id: 30)?.wordBytes == Array("a".utf8))
        cache.commit(written: [(tree: "t", id: 30, batch: batch(1, word: "y"))], merged: [:])
        #expect(cache.batch(tree: "t", id: 30)?.wordBytes == Array("y".utf8))
        cache.commit(written: [], merged: ["t": 35])
        #expect(cache.count(tree: "t") == 1 && cache.count(tree: "u") == 1 && cache.batch(tree: "t", id: 40) != nil)
    }

    /// Eight flushes in one transaction (a search after each insert) write batches and merge
    /// them within it: the commit hands over only what it left, every search saw its own
    /// changes, and the index agrees with the rows.
    @Test func flushesWithinOneTransactionMergeTheirOwnBatches() throws {
        let store = try makeStore(try Self.model())
        let tree = "words:Note:title,body"
        try store.write { tx in
            for n in 0..<11 {
                _ = try tx.insert("Note", ["title": "word\(n) shared", "body": nil as String?])
                #expect(try tx.search(TextSearch("Note", matching: "shared", in: ["title", "body"])).count == n + 1)
            }
        }
        let held = try store.read { try $0.recentBatches(tree, fieldCount: 2) }.count
        #expect(held == 3)  // 7 batches merged by the 8th flush, then 3 more
        #expect(store.wordBatches.count(tree: tree) == held)
        #expect(try store.read { try $0.search(TextSearch("Note", matching: "shared", in: ["title", "body"])) }.count == 11)
        #expect(try store.read { try $0.checkRecords() }.isEmpty)
        try store.close()
    }

    /// Forged change entries (cut short, words out of order, a word without changes, a row
    /// repeated, a tag of 2, counts all 0, bytes past a word's changes, batch 0, a key naming
    /// another first word): the checker names each, and a search that reads one throws
    /// `corrupt` — nothing traps. (Each forged batch is written with a new id: a search keeps a
    /// batch it decoded by its id, which the store never gives twice.)
    @Test func forgedChangeEntriesAreFoundNotTrusted() throws {
        let store = try makeStore(try Self.model())
        _ = try store.write { tx in try tx.insert("Note", ["title": "café", "body": "tree"]) }
        let tree = "words:Note:title,body"
        #expect(try store.read { try $0.recentBatches(tree, fieldCount: 2) }.count == 1)
        #expect(try store.read { try $0.checkRecords() }.isEmpty)
        let word: [UInt8] = Array("cafe".utf8)
        let good = ReferenceFormat.WordChanges.encode([.init(word: word, changes: [.init(key: 1, counts: [1, 0])])])
        #expect(ReferenceFormat.WordChanges.decode(good, fieldCount: 2) != nil)
        let cases: [(String, [UInt8], [UInt8], Bool)] = [
            ("cut short", ReferenceFormat.WordChanges.key(batch: 2, firstWord: word), Array(good.dropLast()), true),
            ("words out of order", ReferenceFormat.WordChanges.key(batch: 3, firstWord: word),
             ReferenceFormat.WordChanges.encode([.init(word: word, changes: [.init(key: 1, counts: [1, 0])]),
                                                 .init(word: Array("ab".utf8), changes: [.init(key: 1, counts: [1, 0])])]), true),
            ("a word without changes", ReferenceFormat.WordChanges.key(batch: 4, firstWord: word), word + [0, 0, 0], true),
            ("a row repeated", ReferenceFormat.WordChanges.key(batch: 5, firstWord: word), word + [0, 2, 6, 1, 1, 0, 0, 1, 0, 1], true),
            ("a tag of 2", ReferenceFormat.WordChanges.key(batch: 6, firstWord: word), word + [0, 1, 4, 1, 2, 1, 0], true),
            ("counts all 0", ReferenceFormat.WordChanges.key(batch: 7, firstWord: word), word + [0, 1, 4, 1, 1, 0, 0], true),
            ("bytes past the changes", ReferenceFormat.WordChanges.key(batch: 8, firstWord: word), word + [0, 1, 5, 1, 1, 1, 0, 7], true),
            ("batch 0", ReferenceFormat.WordChanges.key(batch: 0, firstWord: word), good, true),
            ("a key naming another word", ReferenceFormat.WordChanges.key(batch: 9, firstWord: Array("ca".utf8)), good, false),
        ]
        for (label, key, value, searchFails) in cases {
            try store.storage.write { tx in try tx.tree(tree, createIfMissing: false)!.put(key, value) }
            let problems = try store.read { try $0.checkRecords() }
            #expect(problems.contains { $0.contains(tree) }, "\(label): \(problems)")
            do {
                _ = try store.read { try $0.search(TextSearch("Note", matching: "cafe", in: ["title", "body"])) }
                _ = try store.read { try $0.fetch(FetchRequest("Note", predicate: try FetchPredicate(format: "title CONTAINSWORDS 'cafe'"))) }
                #expect(!searchFails, "\(label)")
            } catch StrataError.corrupt {
                #expect(searchFails, "\(label)")
            }
            try store.storage.write { tx in _ = try tx.tree(tree, createIfMissing: false)!.delete(key) }
        }
        #expect(try store.read { try $0.checkRecords() }.isEmpty)
        try store.close()
    }

    /// The spelling table against a dictionary keyed by the bytes: 20,000 random spellings
    /// (growth from 64 entries, spellings that fold alike kept apart), found or not found alike;
    /// a spelling longer than the table keeps is never remembered.
    @Test func spellingsAreRememberedAsADictionaryWould() {
        var rng = SplitMix64(seed: 0x1A71_6)
        let alphabet: [UInt8] = [0x61, 0x62, 0x41, 0x65, 0xC3, 0xA9, 0x7A, 0x30]
        var table = SpellingTable()
        var reference: [[UInt8]: Int] = [:]
        for i in 0..<20_000 {
            let length = i % 500 == 0 ? SpellingTable.longestKept + 1 + rng.below(10) : rng.below(7)
            let word = (0..<length).map { _ in alphabet[rng.below(alphabet.count)] }
            word.withUnsafeBufferPointer { bytes in
                let hash = SpellingTable.hash(bytes)
                #expect(table.find(bytes, hash: hash) == reference[word], "spelling \(i)")
                if reference[word] == nil {
                    table.remember(bytes, hash: hash, slot: i)
                    if word.count <= SpellingTable.longestKept { reference[word] = i }
                }
            }
        }
        #expect(table.count == reference.count)
    }
}

extension WordIndexTests {
    static func model() throws -> Model {
        try Model {
            Entity("Note") {
                AttributeDescription("title", .string)
                AttributeDescription("body", .string, optional: true)
                AttributeDescription("rank", .int64, default: 0)
                DerivedAttributeDescription("loudTitle", .string, "uppercase:(title)")
                FullTextIndex("title", "body")
                FullTextIndex("loudTitle")  // a derived value, set by the commit
            }
        }
    }

    static let vocabulary = ["café", "Cafe", "CAFÉ", "store", "stored", "storage", "Stör", "swift", "Swiftly", "tree",
                             "trees", "page", "log", "ünïcode", "unicode", "東", "タワー", "x86", "3.14", "don't"]

    static func text(_ rng: inout SplitMix64, words: Int) -> String {
        let separators = [" ", ", ", ". ", "—", " (", ") ", "\n"]
        return (0..<words).map { i in
            (i == 0 ? "" : separators[Int(rng.below(separators.count))])
                + vocabulary[Int(rng.below(vocabulary.count))]
        }.joined()
    }

    /// The search by a scan of every row: the words of each row's values, the query's terms,
    /// the same score — what the index must answer.
    static func scanSearch(_ reader: RecordReader, _ search: TextSearch, fields names: [String]) throws -> [TextSearchHit] {
        let entity = reader.model.entity(search.entity)!
        let fields = names.map { entity.fieldIndex[$0]! }
        let terms = try search.words().terms
        let ids = try reader.objects(search.entity)
        var occurrences = Array(repeating: [UInt64: Int](), count: terms.count)
        for id in ids {
            let row = try #require(try reader.storedRow(of: id))
            // The words of the fields searched, counted together.
            let rowWords = WordIndex.terms(row, fields: fields, folding: WordFolding())
            let words = rowWords.slots.mapValues { rowWords.counts(ofSlot: $0).reduce(0, +) }
            for (t, term) in terms.enumerated() {
                let n = words.reduce(0) { sum, entry in
                    sum + ((term.isPrefix ? entry.key.utf8.starts(with: term.word.utf8) : entry.key == term.word) ? entry.value : 0)
                }
                if n > 0 { occurrences[t][id.primaryKey] = n }
            }
        }
        var hits: [TextSearchHit] = []
        for id in ids {
            let matched = occurrences.filter { $0[id.primaryKey] != nil }.count
            guard search.match == .allWords ? matched == terms.count : matched > 0 else { continue }
            var score = 0.0
            for counts in occurrences {
                if let n = counts[id.primaryKey] {
                    score += TextSearch.score(occurrences: n, holding: counts.count, total: ids.count)
                }
            }
            hits.append(TextSearchHit(id: id, score: score))
        }
        hits.sort { $0.score != $1.score ? $0.score > $1.score : $0.id.primaryKey < $1.id.primaryKey }
        if let limit = search.limit { hits = Array(hits.prefix(limit)) }
        return hits
    }

    /// Random inserts, edits and deletes, searched after each transaction (inside it too) by
    /// the index and by a scan: the same objects, scores and order every time; the checker finds
    /// every entry accounted for. Seeds 1…6 here; `STRATA_MODEL_SEEDS=N` runs 1…N.
    @Test func searchesAnswerAsAScanOfTheRowsDoes() throws {
        let seeds = Array(1...(ProcessInfo.processInfo.environment["STRATA_MODEL_SEEDS"].flatMap(UInt64.init) ?? 6))
        for seed in seeds {
            var rng = SplitMix64(seed: seed)
            let store = try makeStore(try Self.model())
            var compared = 0
            func compareSearches(_ reader: RecordReader, _ count: Int) throws {
                for _ in 0..<count {
                    var query = (0..<(1 + Int(rng.below(3)))).map { _ in
                        Self.vocabulary[Int(rng.below(Self.vocabulary.count))]
                    }
                    if rng.below(3) == 0 { query[query.count - 1] = String(query[query.count - 1].prefix(3)) + "*" }
                    // The two-property index, read whole, in the other order, or for one of
                    // its properties; the derived one.
                    let properties = [["title", "body"], ["body", "title"], ["title"], ["body"], ["loudTitle"]]
                    let search = TextSearch("Note", matching: query.joined(separator: " "),
                                            in: properties[rng.below(properties.count)],
                                            match: rng.below(2) == 0 ? .allWords : .anyWord,
                                            limit: rng.below(3) == 0 ? Int(rng.below(5)) : nil)
                    let expected = try Self.scanSearch(reader, search, fields: search.properties!)
                    let found = try reader.search(search)
                    #expect(found == expected, "seed \(seed): \(search)")
                    compared += 1
                }
            }
            // Word comparisons in fetches: through the index, by a scan of the same request
            // (the evaluator), and — for the one form the search answers too — by the scan
            // search above. Each form states the plan it must get, so the index is really used.
            var fetched = 0
            func compareFetches(_ reader: RecordReader, _ count: Int, inTransaction: Bool) throws {
                for _ in 0..<count {
                    var words = (0..<(1 + Int(rng.below(3)))).map { _ in
                        Self.vocabulary[Int(rng.below(Self.vocabulary.count))]
                    }
                    if rng.below(3) == 0 { words[words.count - 1] = String(words[words.count - 1].prefix(3)) + "*" }
                    let query = words.joined(separator: " ")
                    let op = rng.below(2) == 0 ? "CONTAINSWORDS" : "CONTAINSANYWORD"
                    let forms: [(format: String, plan: String?)] = [
                        ("{title, body} \(op) %@", "words:Note:title,body"),        // decides
                        ("{body, title} \(op) %@", "words:Note:title,body"),        // any order
                        ("title \(op) %@", "words:Note:title,body"),                // one of two properties
                        ("loudTitle \(op) %@", "words:Note:loudTitle"),
                        ("body \(op) %@ AND rank > 3", "words:Note:title,body"),
                        ("title \(op) %@ OR rank == 2", nil),                       // a scan
                        ("NOT (body \(op) %@)", nil),
                    ]
                    let form = forms[Int(rng.below(forms.count))]
                    let predicate = try FetchPredicate(format: form.format, query)
                    var request = FetchRequest("Note", predicate: predicate)
                    if rng.below(3) == 0 { request.sortDescriptors = [FetchSortDescriptor("rank", ascending: rng.below(2) == 0)] }
                    if rng.below(4) == 0 { request.limit = Int(rng.below(4)) }
                    var scan = request
                    scan.usesIndexes = false
                    let context = "seed \(seed): \(predicate) \(request.sortDescriptors) limit \(request.limit.map(String.init) ?? "-")"
                    let found = try reader.fetch(request)
                    #expect(found == (try reader.fetch(scan)), "\(context)")
                    let plan = try reader.fetchPlanDescription(request)
                    if let tree = form.plan {
                        #expect(plan.hasPrefix(tree), "\(context): \(plan)")
                    } else {
                        #expect(plan == "scan all rows", "\(context): \(plan)")
                    }
                    // Prepared, the words a variable's value.
                    let prepared = try reader.fetch(
                        try store.prepare(FetchRequest("Note", predicate: try FetchPredicate(format: form.format.replacingOccurrences(of: "%@", with: "$q")),
                                                       sortedBy: request.sortDescriptors, limit: request.limit)),
                        ["q": .string(query)])
                    #expect(prepared == found, "\(context): prepared")
                    if form.format.hasPrefix("{title, body}") && request.limit == nil && request.sortDescriptors.isEmpty {
                        let search = TextSearch("Note", matching: query, in: ["title", "body"],
                                                match: op == "CONTAINSWORDS" ? .allWords : .anyWord)
                        let expected = try Self.scanSearch(reader, search, fields: ["title", "body"]).map(\.id.primaryKey)
                        #expect(found.map(\.primaryKey) == expected.sorted(), "\(context): against the scan search")
                    }
                    if inTransaction { _ = try reader.fetchCount(request) }
                    fetched += 1
                }
            }
            for _ in 0..<30 {
                try store.write { tx in
                    for _ in 0..<(1 + Int(rng.below(6))) {
                        let notes = try tx.objects("Note")
                        switch rng.below(5) {
                        case 0, 1:
                            var values: [String: any ValueConvertible] = ["title": Self.text(&rng, words: 1 + Int(rng.below(4)))]
                            if rng.below(2) == 0 { values["body"] = Self.text(&rng, words: Int(rng.below(12))) }
                            try tx.insert("Note", values)
                        case 2 where !notes.isEmpty:
                            let note = notes[Int(rng.below(notes.count))]
                            try tx.update(note, ["title": Self.text(&rng, words: 1 + Int(rng.below(4)))])
                        case 3 where !notes.isEmpty:
                            let note = notes[Int(rng.below(notes.count))]
                            let body: StoredValue = rng.below(4) == 0 ? .null : .string(Self.text(&rng, words: Int(rng.below(12))))
                            try tx.update(note, ["body": body, "rank": Int64(rng.below(9))])
                        case 4 where !notes.isEmpty:
                            try tx.delete(notes[Int(rng.below(notes.count))])
                        default:
                            break
                        }
                    }
                    try compareSearches(tx, 3)  // inside the transaction: its own changes
                    try compareFetches(tx, 3, inTransaction: true)
                }
                try store.read { try compareSearches($0, 6) }
                try store.read { try compareFetches($0, 6, inTransaction: false) }
            }
            let problems = try store.read { try $0.checkRecords() }
            #expect(problems.isEmpty, "seed \(seed): \(problems)")
            #expect(compared == 30 * 9 && fetched == 30 * 9)
            try store.close()
        }
    }

    @Test func badModelsAndSearchesAreTypedErrors() throws {
        for (label, entity) in [
            ("an integer", Entity("N") { AttributeDescription("n", .int64); FullTextIndex("n") }),
            ("a relationship", Entity("N") {
                AttributeDescription("t", .string)
                RelationshipDescription("parent", toOne: "N", inverse: "children", optional: true)
                RelationshipDescription("children", toMany: "N", inverse: "parent")
                FullTextIndex("parent")
            }),
            ("nothing", Entity("N") { AttributeDescription("t", .string); FullTextIndex("missing") }),
            ("a property twice", Entity("N") { AttributeDescription("t", .string); FullTextIndex("t", "t") }),
        ] {
            #expect(throws: StrataError.self, "\(label)") { _ = try Model(entities: [entity]) }
        }
        let store = try makeStore(try Model {
            Entity("A") {
                AttributeDescription("t", .string); AttributeDescription("u", .string); AttributeDescription("n", .int64, default: 0)
                FullTextIndex("t"); FullTextIndex("u"); FullTextIndex("t", "u")
            }
            Entity("B") { AttributeDescription("t", .string) }
        })
        try store.write { tx in _ = try tx.insert("A", ["t": "hello", "u": "world"]) }
        for search in [
            TextSearch("B", matching: "hello"),                     // no word index
            TextSearch("A", matching: "hello"),                     // two: which?
            TextSearch("A", matching: "hello", in: ["t", "n"]),     // no such index
            TextSearch("A", matching: " — ,. ", in: ["t"]),         // no word
            TextSearch("A", matching: "hello", in: ["t"], limit: -1),
        ] {
            do {
                _ = try store.read { try $0.search(search) }
                Issue.record("\(search) answered")
            } catch StrataError.invalidFetch {}
        }
        #expect(try store.read { try $0.search(TextSearch("A", matching: "HELLO", in: ["t"])) }.map(\.id.primaryKey) == [1])
        #expect(try store.read { try $0.search(TextSearch("A", matching: "wor*", in: ["u"])) }.count == 1)
        #expect(try store.read { try $0.search(TextSearch("A", matching: "wor*", in: ["u", "t"])) }.count == 1)
        #expect(try store.read { try $0.search(TextSearch("A", matching: "wor", in: ["u"])) }.isEmpty)
        #expect(throws: StrataError.self) { _ = try store.read { try $0.search(TextSearch("Z", matching: "x")) } }

        // Word comparisons: what does not fit is an invalidFetch before any row is read.
        for format in [
            "t CONTAINSWORDS 5", "t CONTAINSWORDS ' ,. '", "t CONTAINSWORDS nil", "t CONTAINSWORDS u",
            "t CONTAINSWORDS {'a', 'b'}", "ANY t CONTAINSWORDS 'hello'", "t CONTAINSWORDS[cd] 'hello'",
            "{t, t} CONTAINSANYWORD 'hello'", "{t, 'x'} CONTAINSWORDS 'hello'", "{} CONTAINSWORDS 'hello'",
            "n CONTAINSWORDS 'hello'", "missing CONTAINSWORDS 'hello'", "t.u CONTAINSWORDS 'hello'",
            "items.@count CONTAINSWORDS 'hello'",
        ] {
            do {
                let request = FetchRequest("A", predicate: try FetchPredicate(format: format))
                _ = try store.read { try $0.fetch(request) }
                Issue.record("\(format) answered")
            } catch StrataError.invalidFetch {
            } catch {
                Issue.record("\(format): \(error)")
            }
        }
        let prepared = try store.prepare(FetchRequest("A", predicate: try FetchPredicate(format: "t CONTAINSWORDS $q")))
        for value: StoredValue in [.string("—"), .int(5), .null] {
            #expect(throws: StrataError.self, "\(value)") { _ = try store.read { try $0.fetch(prepared, ["q": value]) } }
        }
        #expect(try store.read { try $0.fetch(prepared, ["q": .string("HÉLLO")]) }.map(\.primaryKey) == [1])
        // Without a word index the comparison is answered by a scan; with one, through it.
        let unindexed = FetchRequest("B", predicate: try FetchPredicate(format: "t CONTAINSANYWORD 'nope hel*'"))
        try store.write { tx in _ = try tx.insert("B", ["t": "Hello there"]) }
        #expect(try store.read { try $0.fetch(unindexed) }.count == 1)
        #expect(try store.read { try $0.fetchPlanDescription(unindexed) } == "scan all rows")
        let both = FetchPredicate.words(of: [PropertyPath("t"), PropertyPath("u")], matching: "hello wor*", match: .anyWord)
        #expect(both.description == "{t, u} CONTAINSANYWORD \"hello wor*\"")
        #expect(try FetchPredicate(format: both.description) == both)
        #expect(PropertyPath("t").containsWords("x") == (try FetchPredicate(format: "t CONTAINSWORDS 'x'")))
        #expect(try store.read { try $0.fetch(FetchRequest("A", predicate: both)) }.map(\.primaryKey) == [1])
        #expect(try store.read { try $0.fetchPlanDescription(FetchRequest("A", predicate: both)) }
                == "words:A:t,u: any of 2 words, decides a term")
        try store.close()
    }

    /// Forged blocks (counts cut short, all counts 0, the counts moved from one property to the
    /// other, a key repeated, a varint too long, a key past 2⁶⁴, no posting): the checker names
    /// each, and a search reading one throws `corrupt` — nothing traps.
    @Test func forgedWordEntriesAreFoundNotTrusted() throws {
        let store = try makeStore(try Self.model())
        let id = try store.write { tx in try tx.insert("Note", ["title": "café", "body": "tree"]) }
        // Seven more flushes: the last merges every batch of recent changes into the blocks.
        for n in 1..<Int(WordChanges.batchesBeforeMerge) {
            try store.write { tx in _ = try tx.insert("Note", ["title": "other \(n)", "body": "x"]) }
        }
        let tree = "words:Note:title,body"
        #expect(try store.read { try $0.recentBatches(tree, fieldCount: 2) }.isEmpty)
        let cafe = WordIndex.key("cafe", pk: id.primaryKey)
        #expect(try store.read { try $0.checkRecords() }.isEmpty)
        for (label, value, searchFails) in [
            ("counts cut short", [UInt8]([1]), true),
            ("three bytes", [0, 0, 1], true),
            ("all counts 0", [0, 0], true),
            ("the count in the other property", [0, 1], false),
            ("a key repeated", [1, 0, 0, 1, 0], true),
            ("a key difference of eleven bytes", [1, 0] + [UInt8](repeating: 0xFF, count: 10) + [1, 1, 0], true),
            ("a key past 2⁶⁴", [1, 0] + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01] + [1, 0], true),
            ("a count of 2³²", [0x80, 0x80, 0x80, 0x80, 0x10, 0], true),
            ("no posting", [], true),
        ] {
            try store.storage.write { tx in try tx.tree(tree, createIfMissing: false)!.put(cafe, value) }
            let problems = try store.read { try $0.checkRecords() }
            #expect(problems.contains { $0.contains(tree) }, "\(label): \(problems)")
            do {
                let hits = try store.read { try $0.search(TextSearch("Note", matching: "cafe", in: ["title"])) }
                #expect(!searchFails && hits.isEmpty, "\(label): \(hits)")
                let found = try store.read { try $0.fetch(FetchRequest("Note", predicate: try FetchPredicate(format: "title CONTAINSWORDS 'cafe'"))) }
                #expect(!searchFails && found.isEmpty, "\(label): \(found)")
            } catch StrataError.corrupt {
                #expect(searchFails, "\(label)")
            }
        }
        try store.storage.write { tx in try tx.tree(tree, createIfMissing: false)!.put(cafe, [1, 0]) }
        #expect(try store.read { try $0.checkRecords() }.isEmpty)
        try store.close()
    }

    /// The folded-word table against a dictionary keyed by the scalars' values: 20,000 random
    /// words (growth from 64 slots, canonically equivalent spellings as distinct keys), found
    /// or not found alike, then emptied.
    @Test func foldedWordsRememberWhatADictionaryWould() {
        var rng = SplitMix64(seed: 0xF01D)
        let alphabet: [Unicode.Scalar] = ["a", "b", "e", "\u{E9}", "\u{301}", "\u{212B}", "\u{C5}", "\u{6771}", "z"]
        var table = FoldedWords()
        var reference: [[UInt32]: String] = [:]
        for i in 0..<20_000 {
            let word = (0..<(1 + rng.below(6))).map { _ in alphabet[rng.below(alphabet.count)] }
            let key = word.map(\.value), hash = FoldedWords.hash(word[...])
            #expect(table.find(word[...], hash: hash) == reference[key], "word \(i)")
            if reference[key] == nil {
                table.insert(word[...], hash: hash, value: "w\(i)")
                reference[key] = "w\(i)"
            }
        }
        #expect(table.count == reference.count)
        table.removeAll()
        #expect(table.count == 0 && table.find(["a"], hash: FoldedWords.hash(["a"])) == nil)
    }

    /// A word index added by a lightweight migration is built from the rows; the stored model
    /// reads back with it (tools check the index without the program's model).
    @Test func aMigrationBuildsANewWordIndexAndToolsReadIt() throws {
        let fs = SimulatedFileSystem()
        let plain = try makeStore(try Model { Entity("Note") { AttributeDescription("title", .string) } }, fs: fs)
        try plain.write { tx in
            _ = try tx.insert("Note", ["title": "Trees of pages"])
            _ = try tx.insert("Note", ["title": "A page log"])
        }
        try plain.close()
        var o = StoreOptions(durability: .normal)
        o.fileSystem = fs
        let indexed = try RecordStore(path: "/db/records.strata", model: try Model {
            Entity("Note") { AttributeDescription("title", .string); FullTextIndex("title") }
        }, options: o, migration: .lightweight)
        let hits = try indexed.read { try $0.search(TextSearch("Note", matching: "page*")) }
        #expect(Set(hits.map(\.id.primaryKey)) == [1, 2])
        try indexed.close()
        let tool = try RecordStore(path: "/db/records.strata", options: o)
        #expect(tool.model.entity("Note")?.fullTextIndexes == [["title"]])
        #expect(try tool.read { try $0.checkRecords() }.isEmpty)
        try tool.close()
    }
}
