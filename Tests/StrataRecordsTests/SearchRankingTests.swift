import Testing
import StrataTesting
@testable import StrataRecords

/// The pieces of a ranked search against what they replace: the best `limit` by a heap
/// against sorting every hit, a term's postings normalized against a dictionary of counts.
@Suite struct SearchRankingTests {
    @Test func theBestHitsAreTheFirstOfTheSortedHits() {
        let seed: UInt64 = 20_261_134
        var rng = SplitMix64(seed: seed)
        for round in 0..<300 {
            let n = Int(rng.below(200))
            // Few distinct scores and keys: ties on both, which the key must break.
            let hits = (0..<n).map { _ in (score: Double(rng.below(6)) / 4, key: UInt64(rng.below(60))) }
            let limit: Int? = rng.below(4) == 0 ? nil : Int(rng.below(25))
            var top = TopHits(limit: limit)
            for hit in hits { top.offer(score: hit.score, key: hit.key) }
            let sorted = hits.sorted(by: TopHits.ranksBefore)
            let expected = limit.map { Array(sorted.prefix($0)) } ?? sorted
            let found = top.ranked()
            #expect(found.map(\.score) == expected.map(\.score) && found.map(\.key) == expected.map(\.key),
                    "seed \(seed), round \(round), limit \(limit.map(String.init) ?? "-")")
        }
    }

    @Test func postingsInAnyOrderNormalizeToSummedCountsByKey() {
        let seed: UInt64 = 20_261_135
        var rng = SplitMix64(seed: seed)
        for round in 0..<300 {
            var postings = TermPostings()
            var counts: [UInt64: Int] = [:]
            let ascending = rng.below(2) == 0
            var next: UInt64 = 0
            for _ in 0..<Int(rng.below(100)) {
                let key = ascending ? next + 1 + UInt64(rng.below(5)) : UInt64(rng.below(40))
                next = key
                let n = 1 + Int(rng.below(4))
                postings.append(key, n)
                counts[key, default: 0] += n
            }
            postings.normalize()
            #expect(postings.keys == counts.keys.sorted(), "seed \(seed), round \(round)")
            #expect(postings.counts == postings.keys.map { counts[$0]! }, "seed \(seed), round \(round)")
        }
    }

    /// A word entry's counts (one varint per property) read as a plain decoder reads them, for
    /// values of every shape: one byte each (the fast path), longer varints, cut, too long, a
    /// byte left over, all zero.
    @Test func entryCountsReadAsAPlainDecoderReadsThem() {
        let seed: UInt64 = 20_261_136
        var rng = SplitMix64(seed: seed)
        func reference(_ value: [UInt8], _ searched: [Bool]) -> Int? {
            var position = 0, total = 0, selected = 0
            for field in searched.indices {
                var n = 0, shift = 0
                while true {
                    guard position < value.count, shift < 35 else { return nil }
                    let byte = value[position]
                    position += 1
                    n |= Int(byte & 0x7F) << shift
                    shift += 7
                    if byte < 0x80 { break }
                }
                guard n <= Int(UInt32.max) else { return nil }
                total += n
                if searched[field] { selected += n }
            }
            return position == value.count && total > 0 ? selected : nil
        }
        for round in 0..<5_000 {
            let fields = 1 + rng.below(3)
            let searched = (0..<fields).map { _ in rng.below(2) == 0 }
            var value: [UInt8] = []
            for _ in 0..<(fields + rng.below(3) - 1) {
                switch rng.below(4) {
                case 0: value.append(0)
                case 1, 2: value.append(UInt8(rng.below(128)))
                default: value += (0..<rng.below(6)).map { _ in UInt8(128 + rng.below(128)) } + [UInt8(rng.below(128))]
                }
            }
            let expected = reference(value, searched)
            let found = value.withUnsafeBytes { try? WordIndex.count($0, searched: searched, tree: "words") }
            #expect(found == expected, "seed \(seed), round \(round): \(value) \(searched)")
        }
    }
}
