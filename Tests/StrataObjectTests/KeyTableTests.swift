import Foundation
@testable import Strata
import StrataTesting
import Testing

/// The object layer's open-addressing table against `Dictionary`: random inserts, replacements,
/// lookups and removals (dense runs of keys, as primary keys are, and scattered ones, negative
/// temporary identifiers and 0), compared after every step, in both of its modes (keys in
/// order, as the registry's; hashed from the start and sized up front, as a save's).
@Suite struct KeyTableTests {
    @Test(arguments: Array(UInt64(1)...6), [false, true])
    func randomOperationsMatchADictionary(seed: UInt64, scattered: Bool) {
        var rng = SplitMix64(seed: mixSeed(0x1D_7AB1E, seed))
        let objects = (0..<64).map { _ in ManagedObject() }
        var table = KeyTable<Unmanaged<ManagedObject>>(capacity: scattered ? 1_000 : 0, scattered: scattered)
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
                if rng.next() % 2 == 0 {
                    table[k] = Unmanaged.passUnretained(objects[o])
                } else {
                    // The registry's path: a lookup, then an insert that assumes the key free.
                    if table[k] == nil { table.insert(Unmanaged.passUnretained(objects[o]), underAbsent: k) }
                    else { table[k] = Unmanaged.passUnretained(objects[o]) }
                }
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
            #expect(table.count == reference.count && (!scattered || table.scatters),
                    "seed \(seed), step \(step): count")
            if step % 500 == 0 { let kept = table.keepsItsInvariants; #expect(kept, "seed \(seed), step \(step): Robin Hood invariant") }
            if step % 2_000 == 0 || step == 19_999 {
                for (k, o) in reference {
                    #expect(table[k]?.toOpaque() == Unmanaged.passUnretained(objects[o]).toOpaque(), "seed \(seed), step \(step): \(k)")
                }
                #expect(table.elements.count == reference.count)
            }
        }
    }

    /// Decision 71: a dense run of keys (primary keys, temporary identifiers) sits in consecutive
    /// buckets, each in its own, in whatever order it is registered and released.
    @Test(arguments: [false, true])
    func denseRunsSitInTheirOwnBuckets(descending: Bool) {
        let object = ManagedObject()
        for base in [Int64(1), -100_000, Int64(1) << 40] {
            var table = KeyTable<Unmanaged<ManagedObject>>()
            let keys = (0..<Int64(100_000)).map { base + $0 }
            for k in descending ? keys.reversed() : keys { table[k] = Unmanaged.passUnretained(object) }
            let (longest, scatters) = (table.longestProbe, table.scatters)
            #expect(longest == 0 && !scatters && table.count == keys.count, "base \(base)")
            for k in keys.prefix(50_000) { table[k] = nil }
            let (after, invariants) = (table.longestProbe, table.keepsItsInvariants)
            #expect(after == 0 && invariants && table.count == 50_000, "base \(base)")
            #expect(keys.allSatisfy { (table[$0] != nil) == ($0 >= base + 50_000) }, "base \(base)")
        }
    }

    /// Decision 71: keys chosen to collide (strides of a power of two, as a hostile file could
    /// hold) turn the table to hashing after one long probe; every operation stays right and
    /// probes stay short. Each pattern is also mixed with a dense run.
    @Test(arguments: [8, 16, 20, 32, 40, 48])
    func keysThatCollideInOrderAreSpread(strideBits: Int) {
        let objects = (0..<8).map { _ in ManagedObject() }
        var rng = SplitMix64(seed: mixSeed(0x5_7B1DE, UInt64(strideBits)))
        var table = KeyTable<Unmanaged<ManagedObject>>()
        var reference: [Int64: Int] = [:]
        let hostile = (0..<Int64(20_000)).map { $0 &<< Int64(strideBits) }
        let dense = (0..<Int64(5_000)).map { 7 + $0 }
        for (step, k) in (hostile + dense).enumerated() {
            let o = Int(rng.next() % 8)
            table[k] = Unmanaged.passUnretained(objects[o])
            reference[k] = o
            if step % 5 == 4 {
                let gone = (hostile + dense)[Int(rng.next() % UInt64(step + 1))]
                #expect(table.removeValue(forKey: gone)?.toOpaque()
                        == reference.removeValue(forKey: gone).map { Unmanaged.passUnretained(objects[$0]).toOpaque() },
                        "stride 2^\(strideBits), step \(step): removal of \(gone)")
            }
        }
        let (scatters, invariants, longest) = (table.scatters, table.keepsItsInvariants, table.longestProbe)
        #expect(scatters, "stride 2^\(strideBits): the table kept keys in order")
        #expect(invariants && table.count == reference.count)
        #expect(longest < 64, "stride 2^\(strideBits): longest probe \(longest)")
        for (k, o) in reference {
            #expect(table[k]?.toOpaque() == Unmanaged.passUnretained(objects[o]).toOpaque(), "stride 2^\(strideBits): \(k)")
        }
        for k in hostile.prefix(1_000) where reference[k] == nil { #expect(table[k] == nil) }
    }

    /// A save's membership set: the objects inserted are members, others (alive at the same
    /// time, so at other addresses) are not, whatever their number.
    @Test func anObjectSetHoldsExactlyItsObjects() {
        let members = (0..<5_000).map { _ in ManagedObject() }
        let others = (0..<5_000).map { _ in ManagedObject() }
        var set = ObjectSet(capacity: 100)
        for object in members { set.insert(object) }
        for object in members.prefix(100) { set.insert(object) }
        #expect(members.allSatisfy { set.contains($0) })
        #expect(!others.contains { set.contains($0) })
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
