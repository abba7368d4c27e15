/// SplitMix64: a tiny, fast, seedable random number generator.
///
/// The simulated file system, the test suites, the `strata` tool's crash and fuzz runs and the
/// benchmark all need randomness that a printed seed reproduces exactly; this is that one
/// generator (Steele, Lea & Flood, 2014), not a source of secrets.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The generator's whole state: a copy continues the same sequence.
    package var state: UInt64

    /// A generator whose sequence `seed` determines entirely.
    package init(seed: UInt64) { state = seed }

    /// The next 64 random bits; advances the state.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// Uniform in [0, 1).
    package mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
