/// A cheap hash of one 64-bit word for the engine's own dictionary keys (row keys, object
/// keys): SplitMix64's finalizer over the word plus the table's seed.
///
/// Swift's `Hasher` (SipHash-1-3) costs many times this mixer for a one-word key, and the write
/// paths look rows and objects up several times each (an update of one object hashes its keys
/// several times; decision 50). The keys are primary keys and entity indexes: the finalizer spreads
/// sequential keys over every bit, and the per-table seed `Dictionary` passes keeps its iteration
/// order from being predictable.
package enum WordHash {
    /// The hash of `word` for a table seeded with `seed`: what a key's
    /// `_rawHashValue(seed:)` returns (the hash `Dictionary` and `Set` use).
    @inlinable @inline(__always)
    package static func hash(_ word: UInt64, seed: Int) -> Int {
        var x = word &+ UInt64(truncatingIfNeeded: seed) &+ 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x &>> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x &>> 27)) &* 0x94D0_49BB_1331_11EB
        return Int(truncatingIfNeeded: x ^ (x &>> 31))
    }
}
