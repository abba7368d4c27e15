/// A set of slots: bits for slots below 64 (every property of a class of sensible size), a
/// `Set` for the rest. Marking a property changed inserted into a `Set` per changed object,
/// an allocation and hashing for every object an update changes (decision 49).
struct SlotSet: ExpressibleByArrayLiteral {
    private var bits: UInt64 = 0
    private var others: Set<Int> = []

    init(arrayLiteral slots: Int...) { for slot in slots { insert(slot) } }

    var isEmpty: Bool { bits == 0 && others.isEmpty }

    func contains(_ slot: Int) -> Bool {
        slot >= 0 && slot < 64 ? bits & (1 << UInt64(slot)) != 0 : others.contains(slot)
    }

    mutating func insert(_ slot: Int) {
        if slot >= 0 && slot < 64 { bits |= 1 << UInt64(slot) } else { others.insert(slot) }
    }

    mutating func remove(_ slot: Int) {
        if slot >= 0 && slot < 64 { bits &= ~(1 << UInt64(slot)) } else { others.remove(slot) }
    }

    /// Calls `body` with each slot, in ascending order (no array made).
    func forEach(_ body: (Int) -> Void) {
        var rest = bits
        while rest != 0 {
            body(rest.trailingZeroBitCount)
            rest &= rest - 1
        }
        if !others.isEmpty { for slot in others.sorted() { body(slot) } }
    }

    /// The slots in ascending order.
    func sorted() -> [Int] {
        var slots: [Int] = []
        var rest = bits
        while rest != 0 {
            slots.append(rest.trailingZeroBitCount)
            rest &= rest - 1
        }
        return slots + others.sorted()
    }
}
