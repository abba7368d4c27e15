/// Progress of a long timed loop, as a line on standard error every ``interval``: operations
/// done, the rate so far and an estimate of the time left, so a long workload is never a
/// minute of silence.
///
/// Made for the inside of a timed loop: ``update(done:)`` reads the monotonic clock and
/// compares (the loops read it per iteration for their latencies anyway); the line itself is
/// written once per interval, a cost far below the timer's noise.
struct ProgressMeter {
    /// Seconds between progress lines.
    static let interval = 10.0

    /// `insert_list100000 sqlite-recount`: what the line is about.
    let label: String
    /// Operations the loop will do, or nil when it runs for a time window instead.
    let total: Int?
    /// The window's length in seconds, when the loop runs for one.
    let window: Double?
    private let start = Measure.now()
    private var next: UInt64
    /// Operations done and the time at the previous line, for the recent rate.
    private var lastDone = 0
    private var lastTime: UInt64

    /// A meter for a loop of `total` operations.
    init(_ label: String, total: Int) {
        self.label = label
        self.total = total
        window = nil
        next = start &+ UInt64(Self.interval * 1e9)
        lastTime = start
    }

    /// A meter for a loop that runs until `window` seconds have passed.
    init(_ label: String, window: Double) {
        self.label = label
        total = nil
        self.window = window
        next = start &+ UInt64(Self.interval * 1e9)
        lastTime = start
    }

    /// Notes that `done` operations have finished; prints a line when an interval has passed.
    @inline(__always)
    mutating func update(done: Int) {
        let now = Measure.now()
        guard now >= next else { return }
        next = now &+ UInt64(Self.interval * 1e9)
        let recent = Double(done - lastDone) / (Double(now - lastTime) / 1e9)
        (lastDone, lastTime) = (done, now)
        log(Self.line(label, done: done, total: total, window: window, elapsed: Double(now - start) / 1e9, recentRate: recent))
    }

    /// `  … insert_list1000 strata: 4,200 of 10,000 ops (42%), 1.05 K ops/s, ~6 s left`, or for a
    /// time window `  … insert_list100000 sqlite-recount: 300 ops in 12 s of a 30 s window, 25.0 ops/s, ~18 s left`.
    /// The rate is the average so far; the time left comes from `recentRate` (the last
    /// interval's) when given, because the quadratic baselines slow down as their lists grow.
    static func line(_ label: String, done: Int, total: Int?, window: Double?, elapsed: Double, recentRate: Double? = nil) -> String {
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        let pace = recentRate.flatMap { $0 > 0 && $0.isFinite ? $0 : nil } ?? rate
        var s = "  … \(label): "
        var left: Double?
        if let total {
            let percent = total > 0 ? Int((Double(done) / Double(total) * 100).rounded(.down)) : 100
            s += "\(RateFormat.count(done)) of \(RateFormat.count(total)) ops (\(percent)%)"
            if pace > 0 { left = Double(total - done) / pace }
        } else if let window {
            s += "\(RateFormat.count(done)) ops in \(RateFormat.duration(elapsed)) of a \(RateFormat.duration(window)) window"
            left = max(0, window - elapsed)
        }
        s += ", " + RateFormat.opsPerSecond(rate)
        s += left.map { ", ~\(RateFormat.duration($0)) left" } ?? ", time left unknown (nothing finished yet)"
        return s
    }
}
