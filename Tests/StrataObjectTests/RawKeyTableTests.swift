import Foundation
@testable import Strata
import StrataTesting
import Testing

/// The registry's open-addressing table against `Dictionary`: random inserts, replacements,
/// lookups and removals (dense runs of keys, as primary keys are, and scattered ones, negative
/// temporary identifiers and 0), compared after every step.
@Suite struct RawKeyTableTests {
    @Test(arguments: Array(UInt64(1)...6))
    func randomOperationsMatchADictionary(seed: UInt64) {
        var rng = SplitMix64(seed: mixSeed(0x1D_7AB1E, seed))
        let objects = (0..<64).map { _ in ManagedObject() }
        var table = RawKeyTable<Unmanaged<ManagedObject>>()
        var reference: [Int64: Int] = [:]
        func key() -> Int64 {
            switch rng.next() % 4 {
            case 0: return Int64(rng.next() % 3000)                                   // a dense run
            case 1: return -Int64(rng.next() % 500) - 1                               // temporary identifiers
            case 2: return Int64(bitPattern: rng.next())                              // anywhere
            default: return reference.keys.randomElement(using: &rng) ?? 0            // one present
            }
        }
        for step in 0..<20_000 {
            let k = key()
            switch rng.next() % 5 {
            case 0, 1:
                let o = Int(rng.next() % 64)
                table[k] = Unmanaged.passUnretained(objects[o])
                reference[k] = o
            case 2:
                let removed = table.removeValue(forKey: k)
                let expected = reference.removeValue(forKey: k)
                #expect(removed?.toOpaque() == expected.map { Unmanaged.passUnretained(objects[$0]).toOpaque() },
                        "seed \(seed), step \(step): removal of \(k)")
            case 3:
                if rng.next() % 2 == 0 {
                    table[k] = nil
                    reference[k] = nil
                } else {
                    // A conditional removal: only if the entry holds object `o`.
                    let o = Int(rng.next() % 64)
                    let address = Unmanaged.passUnretained(objects[o]).toOpaque()
                    let removed = table.removeValue(forKey: k) { $0.toOpaque() == address }
                    let expected = reference[k] == o
                    if expected { reference[k] = nil }
                    #expect(removed == expected, "seed \(seed), step \(step): conditional removal of \(k)")
                }
            default:
                #expect(table[k]?.toOpaque() == reference[k].map { Unmanaged.passUnretained(objects[$0]).toOpaque() },
                        "seed \(seed), step \(step): lookup of \(k)")
            }
            #expect(table.count == reference.count, "seed \(seed), step \(step): count")
            if step % 2_000 == 0 || step == 19_999 {
                for (k, o) in reference {
                    #expect(table[k]?.toOpaque() == Unmanaged.passUnretained(objects[o]).toOpaque(), "seed \(seed), step \(step): \(k)")
                }
                #expect(table.elements.count == reference.count)
            }
        }
    }

    /// Decisions 47, 48: a fetch keeps at most `RowCache.byteLimit` bytes of rows for its
    /// faults (a registered fault stays small); the faults beyond read their rows, every fault
    /// reads its own, and a fault's row is the row as stored.
    @Test func aLargeFetchKeepsABoundedNumberOfRows() throws {
        try withContainer(for: [Journal.self]) { container in
            // Titles of ~200 bytes: the bound holds ~20,000 rows; 4,000 more than that.
            let title = String(repeating: "t", count: 200)
            let count = RowCache.byteLimit / 200 + 4_000
            try container.store.write { tx in
                for i in 0..<count { _ = try tx.insert("Journal", ["title": "\(title)\(i)"]) }
            }
            let context = ModelContext(container)
            let journals = try context.fetch(FetchDescriptor<Journal>(sortBy: [FetchSortDescriptor("revision")]))
            #expect(journals.count == count && journals.allSatisfy(\.isFault))
            let held = context.rowCache.count
            #expect(held > 0 && held < count && context.rowCache.byteCount <= RowCache.byteLimit)
            #expect(Set(journals.map(\.title)) == Set((0..<count).map { "\(title)\($0)" }))
            #expect(context.statistics.rowReads == count - held)
            #expect(context.rowCache.count == 0 && context.rowCache.byteCount == 0)
        }
    }
}
