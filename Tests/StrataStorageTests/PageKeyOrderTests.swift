import Testing
@testable import StrataStorage

/// A page read from a file is refused unless its keys ascend strictly (FORMAT.md §4), and the
/// search heads built for it order its keys as the keys do. Differential: random leaves and
/// branches, ordered and not (swapped, duplicated, cut short, or a middle key whose prefix
/// changed while the bytes after it still fit between its neighbours), encoded and decoded; a
/// page decodes exactly when its keys ascend byte by byte (the oracle), and then every key is
/// found at its own index through the heads.
@Suite struct PageKeyOrderTests {
    static let pageSize = 4096

    /// A small deterministic generator (SplitMix64), so a failure names its seed.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    /// Keys that share a prefix of random length and often tie in their next 8 bytes, over a
    /// two-letter alphabet so near neighbours and equal heads are common.
    static func keys(_ g: inout Generator) -> [[UInt8]] {
        let prefix = (0..<g.below(13)).map { _ in UInt8(0x61 + g.below(3)) }
        let count = 2 + g.below(60)
        return (0..<count).map { _ in
            let tie = g.below(3) == 0 ? [UInt8](repeating: 0x41, count: 8) : []
            let tail = (0..<g.below(14)).map { _ in UInt8(g.below(2)) }
            return prefix + tie + tail
        }
    }

    /// One way to break (or keep) a sorted, strictly ascending key list.
    static func perturbed(_ sorted: [[UInt8]], _ g: inout Generator) -> [[UInt8]] {
        var keys = sorted
        switch g.below(6) {
        case 0:
            let i = g.below(keys.count), j = g.below(keys.count)
            keys.swapAt(i, j)
        case 1:
            let i = g.below(keys.count - 1)
            keys[i + 1] = keys[i]
        case 2 where keys.count > 2:
            // A middle key whose bytes after the shared prefix still fit between its
            // neighbours, with its prefix changed: only a check of the prefix sees it.
            let i = 1 + g.below(keys.count - 2)
            if !keys[i].isEmpty { keys[i][g.below(min(keys[i].count, 3))] ^= 0x20 }
        case 3:
            let i = g.below(keys.count)
            keys[i] = Array(keys[i].prefix(g.below(keys[i].count + 1)))
            if keys[i].isEmpty { keys[i] = [0] }
        default:
            break
        }
        return keys
    }

    static func ascending(_ keys: [[UInt8]], from first: Int) -> Bool {
        guard keys.count > first + 1 else { return true }
        return (first + 1..<keys.count).allSatisfy { keys[$0 - 1].lexicographicallyPrecedes(keys[$0]) }
    }

    static func leaf(_ keys: [[UInt8]]) -> Page {
        let page = Page(pageSize: pageSize, kind: Format.pageKindLeaf, level: 0, owner: 0)
        for (i, key) in keys.enumerated() {
            let ok = key.withUnsafeBytes { k in [UInt8(i & 0xFF)].withUnsafeBytes { page.insertLeafCell(at: i, key: k, value: $0, overflowLength: nil) } }
            precondition(ok)
        }
        return page
    }

    /// A branch whose first cell has the empty key and whose children are distinct frames
    /// below `offset`.
    static func branch(_ keys: [[UInt8]]) -> Page {
        let page = Page(pageSize: pageSize, kind: Format.pageKindBranch, level: 1, owner: 0)
        for (i, key) in ([[]] + keys).enumerated() {
            let child = UInt64(Format.logStart) + UInt64(i * Format.frameAlignment)
            let ok = key.withUnsafeBytes { page.insertBranchCell(at: i, key: $0, childAddress: child, child: nil) }
            precondition(ok)
        }
        return page
    }

    static func decoded(_ page: Page) throws -> Page {
        var buffer = [UInt8](repeating: 0, count: pageSize)
        return try buffer.withUnsafeMutableBytes {
            try Page.decodeImage(page.encodeImage(into: $0), pageSize: pageSize, offset: 1 << 30)
        }
    }

    @Test(arguments: [1, 2, 3, 4])
    func aPageDecodesExactlyWhenItsKeysAscend(seed: UInt64) throws {
        var g = Generator(state: seed)
        var decodedPages = 0, refused = 0
        for round in 0..<1_500 {
            let sorted = Array(Set(Self.keys(&g).filter { !$0.isEmpty })).sorted { $0.lexicographicallyPrecedes($1) }
            guard sorted.count >= 2 else { continue }
            let keys = Self.perturbed(sorted, &g)
            let isBranch = round % 4 == 3
            let page = isBranch ? Self.branch(keys) : Self.leaf(keys)
            let first = isBranch ? 1 : 0
            let expected = Self.ascending((isBranch ? [[]] : []) + keys, from: first)
            do {
                let copy = try Self.decoded(page)
                #expect(expected, "seed \(seed) round \(round): decoded keys out of order \(keys)")
                guard expected else { continue }
                decodedPages += 1
                // The heads are built, and every key is found through them at its index.
                #expect(copy.heads != nil, "seed \(seed) round \(round)")
                for i in first..<copy.count {
                    let key = (isBranch ? [[]] : []) + keys
                    let found = key[i].withUnsafeBytes { copy.lowerBound($0) }
                    #expect(found.index == i && found.found, "seed \(seed) round \(round) cell \(i)")
                }
            } catch let error as StrataError {
                guard case .corrupt = error else {
                    Issue.record("seed \(seed) round \(round): \(error)")
                    continue
                }
                #expect(!expected, "seed \(seed) round \(round): refused ascending keys \(keys): \(error)")
                refused += 1
            }
        }
        // Both outcomes are exercised, not one alone.
        #expect(decodedPages > 300 && refused > 300, "seed \(seed): \(decodedPages) decoded, \(refused) refused")
    }
}
