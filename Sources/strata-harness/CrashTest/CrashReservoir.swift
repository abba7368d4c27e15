import StrataTesting

/// Reservoir sampling of one crash point over a run's mutating calls: call `n` replaces the
/// kept fork with probability 1/n, so each call is chosen with probability 1/(calls).
final class CrashReservoir: @unchecked Sendable {
    var rng: SplitMix64
    var image: SimulatedFileSystem?
    var point = 0
    var kind = SimulatedFileSystem.Operation.write
    var low = 0
    var high = 0
    var calls = 0
    init(seed: UInt64) { rng = SplitMix64(seed: seed) }
}
