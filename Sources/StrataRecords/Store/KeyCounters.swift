/// The primary-key counters a transaction moved, by entity index: an array (a model has few
/// entities), not a dictionary hashed twice per insert. Iterates the moved counters in entity
/// order.
struct KeyCounters: Sequence {
    private var next: [UInt64?]

    init(entities: Int) { next = Array(repeating: nil, count: entities) }

    /// The next key of the entity at `index`, once this transaction moved or read its counter.
    subscript(index: Int) -> UInt64? {
        get { index < next.count ? next[index] : nil }
        set {
            if index >= next.count { next += Array(repeating: nil, count: index + 1 - next.count) }
            next[index] = newValue
        }
    }

    /// Whether no counter was read or moved.
    var isEmpty: Bool { !next.contains { $0 != nil } }

    func makeIterator() -> some IteratorProtocol<(Int, UInt64)> {
        next.enumerated().lazy.compactMap { i, counter in counter.map { (i, $0) } }.makeIterator()
    }
}
