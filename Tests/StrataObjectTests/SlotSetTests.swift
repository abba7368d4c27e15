@testable import Strata
import StrataTesting
import Testing

/// The slot set that marks an object's changed properties agrees with `Set<Int>` on every
/// operation, slots past the 64 bits included.
@Suite struct SlotSetTests {
    @Test(arguments: [UInt64(41), 42, 43])
    func agreesWithASet(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var slots: SlotSet = []
        var model: Set<Int> = []
        #expect(slots.isEmpty)
        for step in 0..<500 {
            // Mostly small slots, some past the bits.
            let slot = rng.next() % 4 == 0 ? 64 + Int(rng.next() % 100) : Int(rng.next() % 64)
            if rng.next() % 9 == 0 {
                slots = []
                model = []
            } else {
                slots.insert(slot)
                model.insert(slot)
            }
            #expect(slots.isEmpty == model.isEmpty, "seed \(seed) step \(step)")
            #expect(slots.contains(slot) == model.contains(slot), "seed \(seed) step \(step)")
            #expect(slots.sorted() == model.sorted(), "seed \(seed) step \(step)")
            var visited: [Int] = []
            slots.forEach { visited.append($0) }
            #expect(visited == model.sorted(), "seed \(seed) step \(step)")
        }
        let literal: SlotSet = [3, 70, 0, 63, 64]
        #expect(literal.sorted() == [0, 3, 63, 64, 70])
    }
}
