/// One term's holders for a ranked search: primary keys ascending, each with how often it
/// holds the term (a prefix term counts every word it begins).
struct TermPostings {
    var keys: [UInt64] = []
    var counts: [Int] = []

    /// Adds `count` occurrences for `key`; keys may come in any order (`normalize()` after).
    @inline(__always)
    mutating func append(_ key: UInt64, _ count: Int) {
        if let last = keys.last, key <= last { isAscending = false }
        keys.append(key)
        counts.append(count)
    }

    /// Whether the keys came strictly ascending: an exact word's entries do, a prefix's words
    /// each list their own holders.
    private(set) var isAscending = true

    /// Sorts by key and sums the counts of a key listed more than once.
    mutating func normalize() {
        guard !isAscending else { return }
        var pairs = (0..<keys.count).map { (key: keys[$0], count: counts[$0]) }
        pairs.sort { $0.key < $1.key }
        var sortedKeys: [UInt64] = [], sortedCounts: [Int] = []
        sortedKeys.reserveCapacity(pairs.count)
        sortedCounts.reserveCapacity(pairs.count)
        for pair in pairs {
            if sortedKeys.last == pair.key {
                sortedCounts[sortedCounts.count - 1] += pair.count
            } else {
                sortedKeys.append(pair.key)
                sortedCounts.append(pair.count)
            }
        }
        keys = sortedKeys
        counts = sortedCounts
        isAscending = true
    }
}

/// The best `limit` of a stream of scored keys (best: higher score, then lower key), kept in a
/// binary heap whose root is the worst kept: a search's cost to rank its matches is one
/// comparison for most of them, and `log limit` for the few that enter, where sorting every
/// match cost `log n` comparisons each.
struct TopHits {
    let limit: Int?
    private var heap: [(score: Double, key: UInt64)] = []

    init(limit: Int?) { self.limit = limit }

    /// Whether `a` ranks before `b`.
    @inline(__always)
    static func ranksBefore(_ a: (score: Double, key: UInt64), _ b: (score: Double, key: UInt64)) -> Bool {
        a.score != b.score ? a.score > b.score : a.key < b.key
    }

    mutating func offer(score: Double, key: UInt64) {
        let hit = (score: score, key: key)
        guard let limit else {
            heap.append(hit)
            return
        }
        if heap.count < limit {
            heap.append(hit)
            siftUp(heap.count - 1)
        } else if limit > 0, Self.ranksBefore(hit, heap[0]) {
            heap[0] = hit
            siftDown(0)
        }
    }

    /// The kept hits, best first.
    func ranked() -> [(score: Double, key: UInt64)] {
        heap.sorted(by: Self.ranksBefore)
    }

    // The heap's order: a parent ranks after (is worse than) its children.
    private mutating func siftUp(_ start: Int) {
        var i = start
        while i > 0 {
            let parent = (i - 1) / 2
            guard Self.ranksBefore(heap[parent], heap[i]) else { return }
            heap.swapAt(parent, i)
            i = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        while true {
            let left = 2 * i + 1, right = left + 1
            var worst = i
            if left < heap.count, Self.ranksBefore(heap[worst], heap[left]) { worst = left }
            if right < heap.count, Self.ranksBefore(heap[worst], heap[right]) { worst = right }
            if worst == i { return }
            heap.swapAt(i, worst)
            i = worst
        }
    }
}
