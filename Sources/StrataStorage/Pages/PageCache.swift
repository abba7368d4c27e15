import Synchronization

/// Decompressed pages under a byte budget, keyed by frame offset, with 2Q eviction
/// (Johnson & Shasha, 1994) so that one long scan cannot flush the working set:
///
/// - a page seen for the first time enters `probation` (FIFO, ~25% of the budget);
/// - when it leaves probation its offset is remembered in `ghosts` (no data);
/// - a miss whose offset is a ghost goes to `protected` (LRU by a CLOCK reference bit).
///
/// Sharded by offset so that concurrent readers rarely meet on one lock. Pages in the cache
/// are immutable; a reader keeps its page alive by its own reference after eviction.
///
/// The budget covers the writer's dirty pages too (``reserve(_:)``): what they take, the cache
/// gives up, so the store's page memory stays near one budget.
final class PageCache: Sendable {
    private let shards: [LockedShard]
    let budget: Int
    private static let shardCount = 16
    /// What ``reserve(_:)`` and ``reserveInFlight(_:)`` hold back: dirty pages of committed
    /// transactions, and the copies the open write transaction has made so far. Only the
    /// writer changes it.
    private let held = Mutex<(dirty: Int, inFlight: Int)>((0, 0))

    init(budgetBytes: Int, pageSize: Int) {
        budget = budgetBytes
        let perShard = max(budgetBytes / Self.shardCount, pageSize * 4)
        shards = (0..<Self.shardCount).map { _ in LockedShard(Shard(budget: perShard, pageSize: pageSize)) }
    }

    /// Sets the bytes of the budget held elsewhere (dirty pages not yet written): the cache
    /// shrinks to the rest, down to a floor of a few pages per shard, as pages are inserted.
    func reserve(_ bytes: Int) {
        changeHeld { $0 = (max(bytes, 0), 0) }
    }

    /// Holds back `bytes` more for the pages the open write transaction copies (the writer
    /// calls it every few hundred copies): both versions of a page live until the commit, so
    /// a transaction that copies tens of megabytes would otherwise take them past the budget.
    /// The next ``reserve(_:)`` (at commit) or ``endInFlight()`` (at rollback) releases them.
    func reserveInFlight(_ bytes: Int) {
        changeHeld { $0.inFlight += bytes }
    }

    /// Releases what ``reserveInFlight(_:)`` held: the transaction ended without committing.
    func endInFlight() {
        changeHeld { $0.inFlight = 0 }
    }

    /// Applies `change` to what is held back, and the total to the shards if it moved.
    private func changeHeld(_ change: (inout (dirty: Int, inFlight: Int)) -> Void) {
        let total = held.withLock { amounts -> Int? in
            let before = amounts
            change(&amounts)
            return amounts == before ? nil : amounts.dirty + amounts.inFlight
        }
        guard let total else { return }
        let perShard = total / Self.shardCount
        for shard in shards { shard.mutex.withLock { $0.reserve(perShard) } }
    }

    @inline(__always) private func shard(_ offset: UInt64) -> Int {
        Int(truncatingIfNeeded: ((offset &>> 3) &* 0x9E37_79B9_7F4A_7C15) &>> 60)
    }

    func get(_ offset: UInt64) -> Page? {
        shards[shard(offset)].mutex.withLock { $0.get(offset) }
    }

    func insert(_ page: Page, at offset: UInt64) {
        shards[shard(offset)].mutex.withLock { $0.insert(page, at: offset) }
    }

    /// (resident bytes, hits, misses) summed over shards.
    var statistics: (bytes: Int, hits: Int, misses: Int) {
        var total = (bytes: 0, hits: 0, misses: 0)
        for shard in shards {
            shard.mutex.withLock {
                total.bytes += $0.residentBytes
                total.hits += $0.hits
                total.misses += $0.misses
            }
        }
        return total
    }
}

// The shards: private to this file, named as parts of the cache.
extension PageCache {
    private final class LockedShard: Sendable {
        let mutex: Mutex<Shard>
        init(_ shard: Shard) { mutex = Mutex(shard) }
    }

    /// A page's file offset as a table key, hashed without `Hasher` (see ``WordHash``): every
    /// descent that misses a page's child reference looks its child up here.
    private struct PageOffset: Hashable {
        let offset: UInt64
        init(_ offset: UInt64) { self.offset = offset }
        func _rawHashValue(seed: Int) -> Int { WordHash.hash(offset, seed: seed) }
    }

    private struct Shard {
        struct Entry {
            var page: Page
            var referenced: Bool
            var isProtected: Bool
        }

        let pageSize: Int
        let budgetPages: Int
        let ghostLimit: Int
        /// Pages of this shard's budget held by dirty pages (``PageCache/reserve(_:)``).
        private var reservedPages = 0
        var entries: [PageOffset: Entry] = [:]
        var probation = Deque64()
        var protectedRing = Deque64()
        var ghosts = Deque64()
        var ghostSet: Set<PageOffset> = []
        var probationCount = 0
        var protectedCount = 0
        var hits = 0
        var misses = 0

        var residentBytes: Int { (probationCount + protectedCount) * pageSize }

        init(budget: Int, pageSize: Int) {
            self.pageSize = pageSize
            budgetPages = max(budget / pageSize, 4)
            ghostLimit = budgetPages / 2 + 1
        }

        /// The pages the shard may hold now: its budget less what dirty pages reserve.
        private var pages: Int { max(budgetPages - reservedPages, 4) }
        private var probationLimit: Int { max(pages / 4, 1) }
        private var protectedLimit: Int { max(pages - probationLimit, 1) }

        mutating func get(_ offset: UInt64) -> Page? {
            guard let entry = entries[PageOffset(offset)] else { misses += 1; return nil }
            hits += 1
            if entry.isProtected && !entry.referenced { entries[PageOffset(offset)]!.referenced = true }
            return entry.page
        }

        mutating func insert(_ page: Page, at offset: UInt64) {
            if entries[PageOffset(offset)] != nil { return }
            if ghostSet.remove(PageOffset(offset)) != nil {
                entries[PageOffset(offset)] = Entry(page: page, referenced: false, isProtected: true)
                protectedRing.append(offset)
                protectedCount += 1
                evictProtected()
            } else {
                entries[PageOffset(offset)] = Entry(page: page, referenced: false, isProtected: false)
                probation.append(offset)
                probationCount += 1
                evictProbation()
            }
        }

        /// Holds `bytes` of the budget back, evicting what no longer fits.
        mutating func reserve(_ bytes: Int) {
            let pages = bytes / pageSize
            if pages == reservedPages { return }
            let grew = pages > reservedPages
            reservedPages = pages
            if grew {
                evictProbation()
                evictProtected()
            }
        }

        private mutating func evictProbation() {
            while probationCount > probationLimit, let victim = probation.popFirst() {
                guard let entry = entries[PageOffset(victim)], !entry.isProtected else { continue }
                entries[PageOffset(victim)] = nil
                probationCount -= 1
                ghosts.append(victim)
                ghostSet.insert(PageOffset(victim))
                while ghostSet.count > ghostLimit, let old = ghosts.popFirst() { ghostSet.remove(PageOffset(old)) }
            }
        }

        private mutating func evictProtected() {
            // CLOCK: pages referenced since the hand last passed get a second chance.
            while protectedCount > protectedLimit, let victim = protectedRing.popFirst() {
                guard let entry = entries[PageOffset(victim)], entry.isProtected else { continue }
                if entry.referenced {
                    entries[PageOffset(victim)]!.referenced = false
                    protectedRing.append(victim)
                } else {
                    entries[PageOffset(victim)] = nil
                    protectedCount -= 1
                }
            }
        }
    }
}

/// A ring buffer of offsets (no dependency needed for this one use).
struct Deque64 {
    private var storage: [UInt64] = []
    private var head = 0

    mutating func append(_ offset: UInt64) {
        storage.append(offset)
    }

    mutating func popFirst() -> UInt64? {
        guard head < storage.count else { return nil }
        let first = storage[head]
        head += 1
        if head > 1024 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return first
    }
}
