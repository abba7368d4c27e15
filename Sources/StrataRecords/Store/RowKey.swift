import StrataStorage

/// A row inside the engine: entity index and primary key.
struct RowKey: Hashable, Sendable {
    var entity: Int
    var pk: UInt64

    /// One word to hash: the entity index in the top 16 bits (models have far fewer
    /// entities), the primary key's low 48 bits below. Equal keys hash equally; the few
    /// keys that collide are still told apart by `==`.
    func hash(into hasher: inout Hasher) {
        hasher.combine(UInt64(truncatingIfNeeded: entity) << 48 ^ pk)
    }

    /// The hash `Dictionary` and `Set` use: the same word, mixed without `Hasher` (a
    /// transaction looks each row up several times; see ``WordHash``).
    func _rawHashValue(seed: Int) -> Int {
        WordHash.hash(UInt64(truncatingIfNeeded: entity) << 48 ^ pk, seed: seed)
    }
}
