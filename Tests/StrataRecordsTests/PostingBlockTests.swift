import Synchronization
import Testing
import StrataStorage
import StrataTesting
@testable import StrataRecords

/// Word index posting blocks against the reference codec (`ReferenceFormat.PostingBlock`,
/// written from FORMAT.md alone): blocks of every shape read alike, encoding partitions postings
/// into blocks the reference reads back, and a transaction's merges into a word tree leave
/// exactly the postings a dictionary holds, for block sizes from one posting up.
@Suite struct PostingBlockTests {
    typealias Reference = ReferenceFormat.PostingBlock

    /// Random values (valid blocks, then cut, extended, overlong, or bytes at random) read by
    /// both decoders: the same postings, or both refuse.
    @Test func blocksReadAsTheReferenceReadsThem() {
        let seed: UInt64 = 20_261_187
        var rng = SplitMix64(seed: seed)
        for round in 0..<6_000 {
            let fields = 1 + rng.below(3)
            let first = rng.below(5) == 0 ? UInt64.max - UInt64(rng.below(4)) : UInt64(rng.below(1_000))
            var value: [UInt8]
            if rng.below(4) == 0 {
                value = (0..<rng.below(12)).map { _ in UInt8(rng.below(256)) }
            } else {
                value = Reference.encode(Self.postings(&rng, fields: fields, first: first))
                switch rng.below(6) {
                case 0: value = Array(value.prefix(rng.below(value.count + 1)))
                case 1: value += (0..<(1 + rng.below(4))).map { _ in UInt8(rng.below(256)) }
                case 2: value.insert(contentsOf: [UInt8](repeating: 0x80, count: 1 + rng.below(10)), at: rng.below(value.count + 1))
                case 3 where !value.isEmpty: value[rng.below(value.count)] = UInt8(rng.below(256))
                default: break
                }
            }
            let expected = Reference.decode(value, firstKey: first, fieldCount: fields)
            let searched = (0..<fields).map { _ in rng.below(2) == 0 }
            // Both reading paths: counts into an array (the merge, the checker), the searched sum (searches).
            let read: (full: [Reference.Posting], sums: [Int])? = value.withUnsafeBytes { bytes in
                var full: [Reference.Posting] = [], sums: [Int] = []
                var reader = PostingBlockReader(bytes, firstKey: first)
                var counts: [UInt32] = []
                do {
                    while try reader.next(fieldCount: fields, into: &counts, tree: "words") {
                        full.append(Reference.Posting(key: reader.pk, counts: counts))
                        counts.removeAll()
                    }
                    var again = PostingBlockReader(bytes, firstKey: first)
                    while let n = try again.next(searched: searched, tree: "words") { sums.append(n) }
                    // The merge's walk: each posting's counts where they lie, checked alike.
                    var ranges = PostingBlockReader(bytes, firstKey: first)
                    var keys: [UInt64] = []
                    while let range = try ranges.nextCounts(fieldCount: fields, tree: "words") {
                        keys.append(ranges.pk)
                        if range.count < fields { Issue.record("seed \(seed), round \(round): counts of \(range.count) bytes") }
                    }
                    if keys != full.map(\.key) { Issue.record("seed \(seed), round \(round): the merge's walk read other keys") }
                    // The append path's walk to the last key (it checks less, and must agree on
                    // what it accepts).
                    var walk = PostingBlockReader(bytes, firstKey: first)
                    if try walk.lastKey(fieldCount: fields, tree: "words") != full.last?.key {
                        Issue.record("seed \(seed), round \(round): the last key walked differs")
                    }
                } catch let error as StrataError {
                    guard case .corrupt = error else { Issue.record("seed \(seed), round \(round): \(error)"); return nil }
                    return nil
                } catch {
                    Issue.record("seed \(seed), round \(round): not a StrataError: \(error)")
                    return nil
                }
                return (full, sums)
            }
            #expect(read?.full == expected, "seed \(seed), round \(round): \(value) first \(first)")
            // On any value the walk ends in a key or a typed error.
            value.withUnsafeBytes { bytes in
                var walk = PostingBlockReader(bytes, firstKey: first)
                do { _ = try walk.lastKey(fieldCount: fields, tree: "words") } catch {
                    if case StrataError.corrupt = error {} else { Issue.record("seed \(seed), round \(round): \(error)") }
                }
            }
            if let expected, let read {
                let sums = expected.map { posting in posting.counts.indices.reduce(0) { $0 + (searched[$1] ? Int(posting.counts[$1]) : 0) } }
                #expect(read.sums == sums, "seed \(seed), round \(round)")
            }
        }
    }

    /// Postings encoded into blocks of a target size: the blocks, read by the reference, give the
    /// postings back in order; each starts at its first key and ends at the first posting that
    /// reached the target.
    @Test func encodedBlocksHoldTheirPostingsInOrder() {
        let seed: UInt64 = 20_261_188
        var rng = SplitMix64(seed: seed)
        for round in 0..<500 {
            let fields = 1 + rng.below(3)
            let postings = Self.postings(&rng, fields: fields, first: UInt64(rng.below(100)), count: rng.below(300))
            let target = [1, 7, 32, 128, 4_096][rng.below(5)]
            var writer = PostingBlock.Writer(targetBytes: target)
            for posting in postings { writer.append(posting.key, counts: posting.counts[...]) }
            let blocks = writer.finish()
            var decoded: [Reference.Posting] = []
            for (i, block) in blocks.enumerated() {
                let read = Reference.decode(block.bytes, firstKey: block.first, fieldCount: fields)
                #expect(read?.first?.key == block.first, "seed \(seed), round \(round), block \(i)")
                decoded += read ?? []
                let withoutLast = Reference.encode(Array((read ?? []).dropLast()))
                if i < blocks.count - 1 {
                    #expect(block.bytes.count >= target && withoutLast.count < target,
                            "seed \(seed), round \(round), block \(i): \(block.bytes.count) bytes for \(target)")
                }
            }
            #expect(decoded == postings, "seed \(seed), round \(round)")
        }
    }

    /// Random changes (new counts, removals, a row changed twice in one batch) to a few words,
    /// applied in batches as commits apply them, with block targets from one posting to 128
    /// bytes: after each batch the tree holds exactly the postings a dictionary holds, each
    /// word's blocks in key order and disjoint, every block as the reference reads it.
    @Test func mergedChangesLeaveWhatADictionaryHolds() throws {
        let seed: UInt64 = 20_261_189
        var rng = SplitMix64(seed: seed)
        let store = try makeStore(try Model { Entity("Note") { AttributeDescription("title", .string) } })
        let words = ["a", "ab", "b", "café", "z"]
        let fields = 2
        for (run, target) in [1, 5, 24, 128].enumerated() {
            let tree = "words:test\(run)"
            var model: [String: [UInt64: [UInt32]]] = [:]
            for batch in 0..<60 {
                var pending = PendingWords(fieldCount: fields)
                let vocabulary = WordVocabulary()
                for _ in 0..<(1 + rng.below(batch % 7 == 0 ? 200 : 12)) {
                    let word = words[rng.below(words.count)]
                    // Keys in a window that moves: appends, inserts between, and removals.
                    let pk = UInt64(rng.below(40 + batch * 8))
                    if rng.below(3) == 0 {
                        pending.set(word, pk: pk, counts: nil, vocabulary: vocabulary)
                        model[word]?[pk] = nil
                    } else {
                        let counts = (0..<fields).map { _ in rng.below(3) }
                        let kept = counts.allSatisfy { $0 == 0 } ? [1] + counts.dropFirst() : counts
                        pending.set(word, pk: pk, counts: kept.map(UInt32.init), vocabulary: vocabulary)
                        model[word, default: [:]][pk] = kept.map(UInt32.init)
                    }
                }
                try store.storage.write { tx in try pending.apply(to: try tx.treeCreatingIfMissing(tree), name: tree, vocabulary: vocabulary, targetBytes: target) }
                let entries = try store.storage.read { tx in try tx.tree(tree)?.entries() ?? [] }
                var found: [String: [UInt64: [UInt32]]] = [:]
                var lastKey: [String: UInt64] = [:]
                for entry in entries {
                    let word = String(decoding: entry.key.dropLast(9), as: UTF8.self)
                    let first = entry.key.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                    let postings = try #require(Reference.decode(entry.value, firstKey: first, fieldCount: fields),
                                                "seed \(seed), target \(target), batch \(batch): a block the reference refuses")
                    if let last = lastKey[word] {
                        #expect(first > last, "seed \(seed), target \(target), batch \(batch): \(word)'s blocks overlap")
                    }
                    lastKey[word] = postings.last!.key
                    for posting in postings { found[word, default: [:]][posting.key] = posting.counts }
                }
                #expect(found == model.filter { !$0.value.isEmpty }, "seed \(seed), target \(target), batch \(batch)")
            }
        }
        try store.close()
    }

    /// The record fuzzers' oracle reads word indexes too: a sound store passes, with its
    /// searches agreeing with scans; a block that lost a posting is found by the checker, and
    /// the oracle then reports the store read, problems named, not a failure.
    @Test func theFuzzOracleComparesWordIndexesWithScans() throws {
        let fs = SimulatedFileSystem()
        let model = try Self.notesModel()
        var rng = SplitMix64(seed: 20_261_190)
        let store = try makeStore(model, fs: fs)
        // Eight transactions: the eighth merges every batch of recent changes into the blocks.
        for _ in 0..<Int(WordChanges.batchesBeforeMerge) {
            try store.write { tx in
                for _ in 0..<5 {
                    _ = try tx.insert("Note", ["title": WordIndexTests.text(&rng, words: 3), "body": WordIndexTests.text(&rng, words: 8)])
                }
            }
        }
        #expect(try store.read { try $0.recentBatches("words:Note:title,body", fieldCount: 2) }.isEmpty)
        try store.close()
        var options = StoreOptions(durability: .normal)
        options.fileSystem = fs
        guard case .read(let objects, let problems) = RecordsFuzzCheck.examine(path: "/db/records.strata", options: options, model: model) else {
            Issue.record("a sound word-indexed store was not read cleanly")
            return
        }
        #expect(objects == 40 && problems.isEmpty, "\(problems)")
        // Drop the last posting of the first block holding two or more whose row no batch of
        // recent changes names (the oracle's own writes leave a batch, which a change would
        // shadow the damage with).
        let damaged = try makeStore(model, fs: fs)
        try damaged.storage.write { tx in
            let tree = try #require(try tx.tree("words:Note:title,body"))
            var changed = Set<[UInt8]>()
            for (key, value) in try tree.entries() where ReferenceFormat.WordChanges.parseKey(key) != nil {
                for word in try #require(ReferenceFormat.WordChanges.decode(value, fieldCount: 2)) {
                    for change in word.changes { changed.insert(word.word + [0] + KeyEncoding.primaryKey(change.key)) }
                }
            }
            for (key, value) in try tree.entries() where ReferenceFormat.WordChanges.parseKey(key) == nil {
                let first = key.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                guard let postings = ReferenceFormat.PostingBlock.decode(value, firstKey: first, fieldCount: 2),
                      postings.count >= 2,
                      !changed.contains(Array(key.dropLast(8)) + KeyEncoding.primaryKey(postings.last!.key)) else { continue }
                try tree.put(key, ReferenceFormat.PostingBlock.encode(Array(postings.dropLast())))
                break
            }
        }
        try damaged.close()
        let outcome = RecordsFuzzCheck.examine(path: "/db/records.strata", options: options, model: model)
        #expect(!outcome.isFailure, "\(outcome)")
        if case .read(_, let problems) = outcome { #expect(problems.contains { $0.contains("words:Note") }, "\(problems)") }
    }

    /// A crash at every file operation of word-index commits (notes inserted, bodies rewritten
    /// across blocks, notes deleted, blocks split and emptied; batches of recent changes
    /// written, then merged into the blocks by the commit that would hold the eighth, then
    /// written again; then a format-2 index rebuilt at open), each image crashed as its seed
    /// says: the store opens with its word index agreeing with its rows (the checker finds nothing; searches answer as a scan of the rows),
    /// its notes those of a whole number of commits.
    @Test func aCrashAnywhereInWordIndexCommitsLeavesIndexAndRowsAgreeing() throws {
        let seed: UInt64 = 20_261_191
        var rng = SplitMix64(seed: seed)
        let model = try WordIndexTests.model()
        let fs = SimulatedFileSystem()
        var options = StoreOptions(durability: .full)
        options.fileSystem = fs
        options.syncIntervalMilliseconds = 3_600_000
        let path = "/db/records.strata"
        func note(_ rng: inout SplitMix64) -> [String: any ValueConvertible] {
            ["title": WordIndexTests.text(&rng, words: 1 + Int(rng.below(4))), "body": WordIndexTests.text(&rng, words: Int(rng.below(12)))]
        }
        var store = try RecordStore(path: path, model: model, options: options)
        var ids = try store.write { tx in try (0..<40).map { _ in try tx.insert("Note", note(&rng)) } }
        var counts = [ids.count]  // notes after each commit
        let images = Mutex<[SimulatedFileSystem]>([])
        fs.onMutation { _, _ in images.withLock { $0.append(fs.clone()) } }
        for round in 0..<8 {
            try store.write { tx in
                for _ in 0..<6 { ids.append(try tx.insert("Note", note(&rng))) }
                for _ in 0..<8 { try tx.update(ids[rng.below(ids.count)], ["body": WordIndexTests.text(&rng, words: Int(rng.below(12)))]) }
                if round % 2 == 1 {
                    for _ in 0..<4 { try tx.delete(ids.remove(at: rng.below(ids.count))) }
                }
            }
            counts.append(ids.count)
            // Round 6 merged the seven batches the commits before it wrote; round 7 wrote one.
            let batches = try store.read { try $0.recentBatches("words:Note:title,body", fieldCount: 2) }.count
            #expect(batches == (round < 6 ? round + 2 : round - 6), "seed \(seed) round \(round)")
        }
        try store.close()
        // The same store as format 2 wrote it (an entry per word and row), rebuilt at the next open.
        fs.onMutation(nil)
        store = try RecordStore(path: path, model: model, options: options)
        try store.storage.write { tx in
            for (name, fields) in [("words:Note:title,body", 2), ("words:Note:loudTitle", 1)] {
                let words = try #require(try tx.tree(name))
                for (key, value) in try words.entries() {
                    _ = try words.delete(key)
                    // Format 2 had no change entries; the rebuild at open reads the rows.
                    if ReferenceFormat.WordChanges.parseKey(key) != nil { continue }
                    let first = key.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                    for posting in try #require(ReferenceFormat.PostingBlock.decode(value, firstKey: first, fieldCount: fields)) {
                        try words.put(Array(key.dropLast(8)) + KeyEncoding.primaryKey(posting.key),
                                      ReferenceFormat.PostingBlock.encode([posting]))
                    }
                }
            }
            try tx.tree("records:meta")!.put(KeyFormat.metaKey, [2])
        }
        try store.close()
        fs.onMutation { _, _ in images.withLock { $0.append(fs.clone()) } }
        try RecordStore(path: path, model: model, options: options).close()
        fs.onMutation(nil)
        let points = images.withLock { $0 }
        var queries = ["caf*", "store", "tree*", "東", "x86"]
        for _ in 0..<3 { queries.append(WordIndexTests.text(&rng, words: 1)) }
        for (n, image) in points.enumerated() {
            image.crash(seed: seed &+ UInt64(n))
            let label = "seed \(seed), crash at operation \(n) of \(points.count)"
            var crashed = options
            crashed.fileSystem = image
            let reopened = try RecordStore(path: path, model: model, options: crashed)
            try expectConsistent(reopened, label)
            try reopened.read { reader in
                let notes = try reader.count("Note")
                #expect(counts.contains(notes), "\(label): \(notes) notes")
                for query in queries {
                    let search = TextSearch("Note", matching: query, in: ["title", "body"], limit: 10)
                    let found = try reader.search(search)
                    let scanned = try WordIndexTests.scanSearch(reader, search, fields: ["title", "body"])
                    #expect(found == scanned, "\(label), '\(query)'")
                }
            }
            try reopened.close()
        }
        print("PostingBlockTests crash points: \(points.count)")
    }

    /// Notes with a title and an optional body, and a word index over both.
    static func notesModel() throws -> Model {
        try Model {
            Entity("Note") {
                AttributeDescription("title", .string)
                AttributeDescription("body", .string, optional: true)
                FullTextIndex("title", "body")
            }
        }
    }

    /// Postings with ascending keys from `first` (gaps of every size, up to the end of the key
    /// space) and counts of one byte or more.
    static func postings(_ rng: inout SplitMix64, fields: Int, first: UInt64, count: Int? = nil) -> [Reference.Posting] {
        var postings: [Reference.Posting] = []
        var key = first
        for i in 0..<(count ?? (1 + rng.below(6))) {
            if i > 0 {
                let gap: UInt64 = rng.below(8) == 0 ? UInt64(rng.below(1 << 20)) << UInt64(rng.below(40)) : UInt64(1 + rng.below(300))
                guard key <= UInt64.max - max(gap, 1) else { break }
                key += max(gap, 1)
            }
            var counts = (0..<fields).map { _ in rng.below(5) == 0 ? UInt32(rng.below(1 << 31)) : UInt32(rng.below(3)) }
            if counts.allSatisfy({ $0 == 0 }) { counts[rng.below(fields)] = 1 }
            postings.append(Reference.Posting(key: key, counts: counts))
        }
        return postings
    }
}
