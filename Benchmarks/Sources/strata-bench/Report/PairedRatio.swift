/// The subject engine's rate ÷ a baseline's over the repeats of a benchmark: the median of
/// the ratios of runs from the same repeat, and their range.
///
/// Within a repeat the engines run one after the other (and the first engine rotates), so a
/// pair saw nearly the same machine; the median of per-pair ratios cancels slow drift (page
/// cache, thermal state, other load) that a ratio of two medians taken from different
/// moments keeps. Without pairs (an engine failed in every repeat) there is no ratio.
struct PairedRatio: Codable, Sendable, Equatable {
    var median: Double
    var low: Double
    var high: Double
    /// How many repeats had a run of both engines.
    var pairs: Int

    init(median: Double, low: Double, high: Double, pairs: Int) {
        self.median = median
        self.low = low
        self.high = high
        self.pairs = pairs
    }

    /// Pairs runs by ``RunCore/repeatIndex`` (by position for runs without one) and takes
    /// `rate(subject) ÷ rate(baseline)` for each pair with both rates positive.
    init?(_ subject: [RunCore], _ baseline: [RunCore], _ rate: (RunCore) -> Double) {
        func keyed(_ runs: [RunCore]) -> [Int: RunCore] {
            Dictionary(runs.enumerated().map { ($1.repeatIndex ?? ($0 + 1), $1) }, uniquingKeysWith: { first, _ in first })
        }
        let others = keyed(baseline)
        var ratios: [Double] = []
        for (repeatIndex, run) in keyed(subject) {
            guard let other = others[repeatIndex] else { continue }
            let a = rate(run), b = rate(other)
            if a > 0, b > 0, a.isFinite, b.isFinite { ratios.append(a / b) }
        }
        guard !ratios.isEmpty else { return nil }
        self.init(median: Measure.median(ratios), low: ratios.min()!, high: ratios.max()!, pairs: ratios.count)
    }

    /// `5.32×`, or `5.32× (5.10–5.51)` when there was more than one pair.
    var text: String {
        let m = String(format: "%.2f×", median)
        return pairs > 1 ? m + String(format: " (%.2f–%.2f)", low, high) : m
    }
}
