/// How long a timed loop of calls took, and each call's latency: what a run's `seconds`,
/// `p50Micros` and `p99Micros` come from.
struct Timing {
    var nanoseconds: UInt64
    /// Every call's latency, sorted.
    var latencies: [UInt64]
    /// Calls made (a loop on a time window stops early).
    var calls: Int { latencies.count }

    var seconds: Double { Double(nanoseconds) / 1e9 }

    /// The nearest-rank percentile `p` (0...1) of the calls' latencies, in microseconds.
    func micros(at p: Double) -> Double { Double(Measure.percentile(latencies, p)) / 1e3 }

    /// Times `count` calls of `body` (given the call's index), together `ops` operations, with
    /// a progress line for `label` while it runs. The peak RSS starts afresh here, so it covers
    /// the loop and not the making of its input.
    @inline(never)   // a stable symbol for callgrind's --toggle-collect (the timed part alone)
    static func calls(_ label: String, _ count: Int, ops: Int, _ body: (Int) throws -> Void) rethrows -> Timing {
        var latencies = [UInt64](repeating: 0, count: count)
        var progress = ProgressMeter(label, total: ops)
        Measure.resetPeakRSS()
        let start = Measure.now()
        for i in 0..<count {
            let callStart = Measure.now()
            try body(i)
            latencies[i] = Measure.now() - callStart
            progress.update(done: ops * (i + 1) / count)
        }
        let end = Measure.now()
        latencies.sort()
        return Timing(nanoseconds: end - start, latencies: latencies)
    }

    /// Like ``calls(_:_:ops:_:)``, but stops at the first call boundary after `seconds` (or
    /// after `count` calls, if that comes first); each call is `opsPerCall` operations.
    static func window(_ label: String, _ seconds: Double, _ count: Int, opsPerCall: Int,
                       _ body: (Int) throws -> Void) rethrows -> Timing {
        var latencies: [UInt64] = []
        latencies.reserveCapacity(count)
        var progress = ProgressMeter(label, window: seconds)
        let window = UInt64(seconds * 1e9)
        Measure.resetPeakRSS()
        let start = Measure.now()
        var i = 0
        while i < count, Measure.now() - start < window {
            let callStart = Measure.now()
            try body(i)
            latencies.append(Measure.now() - callStart)
            i += 1
            progress.update(done: i * opsPerCall)
        }
        let end = Measure.now()
        latencies.sort()
        return Timing(nanoseconds: end - start, latencies: latencies)
    }
}
