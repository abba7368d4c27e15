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
}
