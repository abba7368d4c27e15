import Foundation

/// The CPU time every core of the machine spent busy so far (`/proc/stat`'s first line: user,
/// nice, system, irq, softirq and steal time), so a push's report can say what other
/// processes took meanwhile: on a shared machine, a push that waited for a core is not slow
/// for its own reasons.
enum MachineCPU {
    private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// Busy CPU seconds of all cores together since boot; nil when `/proc/stat` cannot be read.
    static func busySeconds() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first, line.hasPrefix("cpu ") else { return nil }
        let ticks = line.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard ticks.count >= 8 else { return nil }
        // user, nice, system, idle, iowait, irq, softirq, steal: all but idle and iowait.
        let busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7]
        return Double(busy) / ticksPerSecond
    }

    /// Cores the machine has.
    static var cores: Int { ProcessInfo.processInfo.activeProcessorCount }
}
