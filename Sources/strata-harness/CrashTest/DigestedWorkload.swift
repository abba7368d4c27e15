import StrataTesting

/// A crash workload with its states digested once (rounds compare digests, not whole contents).
struct DigestedWorkload {
    let steps: [CrashWorkload.Step]
    let states: [ContentDigest]

    init(_ w: CrashWorkload) {
        steps = w.steps
        states = w.states.map { ContentDigest(content: $0) }
    }
}
