import StrataTesting

/// A crash workload with its states digested once (rounds compare digests, not whole contents).
struct DigestedWorkload {
    let steps: [CrashWorkload.Step]
    let states: [ContentDigest]

    init(_ workload: CrashWorkload) {
        steps = workload.steps
        states = workload.states.map { ContentDigest(content: $0) }
    }
}
