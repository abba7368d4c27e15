import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where the CPU went while one `strata` child ran: the tool itself, PostgreSQL's processes,
/// this process (the writer, in `follow`) and everything else on the machine; and what that
/// says limits the push (``verdict``).
struct CPUShares: Codable, Sendable {
    /// The tool's process, from its start to its end.
    var wallSeconds: Double
    var toolSeconds: Double
    var postgresSeconds: Double?
    /// This process (the writer, in `follow`) and its other children.
    var benchSeconds: Double
    /// The machine's busy time less the three above: other people's work on a shared machine.
    var otherSeconds: Double?
    var cores: Int

    /// The counters at the start of a child's run; ``finish(_:)`` takes the differences.
    struct Window {
        let postgres: PostgresCPU?
        private let postgresStart: Double?
        private let machineStart: Double?
        private let benchStart: Double

        init(postgres: PostgresCPU?) {
            self.postgres = postgres
            postgresStart = postgres?.seconds()
            machineStart = MachineCPU.busySeconds()
            benchStart = CPUShares.ownSeconds()
        }

        /// The shares of the run that ended with `exit`; `children`: the CPU time of this
        /// process's other children meanwhile (the follow phase's `psql`), counted as its own.
        func finish(_ exit: ToolProcess.Exit, children: Double = 0) -> CPUShares {
            let bench = CPUShares.ownSeconds() - benchStart + children
            var postgresSeconds: Double?
            if let postgresStart, let now = postgres?.seconds() { postgresSeconds = now - postgresStart }
            var others: Double?
            if let machineStart, let now = MachineCPU.busySeconds() {
                others = max(0, now - machineStart - exit.cpuSeconds - (postgresSeconds ?? 0) - bench)
            }
            return CPUShares(wallSeconds: exit.wallSeconds, toolSeconds: exit.cpuSeconds, postgresSeconds: postgresSeconds,
                             benchSeconds: bench, otherSeconds: others, cores: MachineCPU.cores)
        }
    }

    /// This process's user and system CPU seconds so far.
    static func ownSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// `seconds` as a share of the wall time: `0.50 s (28%)`.
    func share(_ seconds: Double?) -> String {
        guard let seconds, wallSeconds > 0 else { return "-" }
        return String(format: "%.2f s (%.0f%%)", seconds, seconds / wallSeconds * 100)
    }

    /// What limits the run, from the shares of its wall time (a share of 100% is one core
    /// busy throughout): one process busy nearly all the time; or the two working at once
    /// (their shares add up to more than one core), neither busy throughout; or the two taking turns, each
    /// waiting for the other's reply, so their times add up to the wall; or the machine's
    /// cores held by other processes; or, when none of these, waiting on the loopback round
    /// trips themselves. A machine whose cores were all busy meanwhile is said as well: then
    /// each process also waited for a core, and an idle machine would run the push faster.
    var verdict: String {
        guard wallSeconds > 0 else { return "-" }
        let tool = toolSeconds / wallSeconds, server = (postgresSeconds ?? 0) / wallSeconds
        let others = ((otherSeconds ?? 0) + benchSeconds) / wallSeconds
        let saturated = tool + server + others >= 0.85 * Double(cores)
        let contention = String(format: "other processes held %.1f of the %d cores", others, cores)
        let primary: String
        if tool >= 0.85 && tool >= server {
            primary = "the tool's CPU"
        } else if server >= 0.85 {
            primary = "PostgreSQL's CPU"
        } else if tool + server >= 1.05 {
            // More than one core's worth between them: they worked at once (a push writes the
            // next batch while PostgreSQL applies one), and neither was busy throughout.
            primary = "the tool and PostgreSQL working at once, neither busy throughout (the hand-offs between "
                + "batches and their round trips)"
        } else if tool + server >= 0.85 {
            primary = "the tool and PostgreSQL taking turns (one works while the other waits for it: their CPU times add up)"
        } else if saturated {
            return "CPU contention: \(contention); the tool and PostgreSQL take turns on what is left"
        } else {
            return "round trips: neither process keeps a core busy and the machine has cores to spare"
        }
        return saturated ? primary + "; and the machine was saturated (\(contention)), so each also waited for a core"
            : primary
    }

    /// `strata replicate 0.50 s (28%), PostgreSQL 0.62 s (35%), others 1.71 s (97%) of its 1.77 s`.
    var text: String {
        String(format: "strata replicate %@, PostgreSQL %@, this process %@, other processes %@ of the tool's %.2f s "
               + "on %d cores", share(toolSeconds), share(postgresSeconds), share(benchSeconds), share(otherSeconds),
               wallSeconds, cores)
    }
}
