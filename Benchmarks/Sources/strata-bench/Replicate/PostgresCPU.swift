import Foundation

/// The CPU time the PostgreSQL cluster's processes have used, read from `/proc`: the
/// postmaster's own and that of the children it has reaped (the backend that served a push
/// ends with its connection), plus its live children's (the checkpointer, the WAL writer,
/// autovacuum). The difference over a push is what the server spent on it, beside
/// the `strata` tool's CPU time (``ToolProcess/Exit/cpuSeconds``): which of the two, if
/// either, kept a core busy says what limits the push.
struct PostgresCPU {
    let postmaster: Int32
    private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// The cluster whose data directory is `dataDirectory` (its `postmaster.pid` names the
    /// postmaster); nil when that cannot be read.
    init?(dataDirectory: String) {
        guard let text = try? String(contentsOfFile: dataDirectory + "/postmaster.pid", encoding: .utf8),
              let first = text.split(separator: "\n").first, let pid = Int32(first) else { return nil }
        postmaster = pid
    }

    /// CPU seconds used so far by the cluster's processes, once no client's backend is left
    /// (or `timeout` seconds have passed): a backend's time reaches the postmaster's count of
    /// its children only when the postmaster has reaped it, a moment after its client left.
    func seconds(timeout: Double = 1) -> Double {
        let deadline = Measure.now() + UInt64(timeout * 1e9)
        while true {
            let (seconds, clients) = scan()
            if clients == 0 || Measure.now() >= deadline { return seconds }
            usleep(1_000)
        }
    }

    /// The cluster's CPU seconds so far, and how many client backends are running or ended
    /// but not yet reaped.
    private func scan() -> (seconds: Double, clients: Int) {
        while true {
            // The postmaster's count of reaped children before and after the children's: a child
            // reaped in between would be in neither, so the scan is taken again.
            guard let before = Self.stat(postmaster) else { return (0, 0) }
            var ticks = 0
            var clients = 0
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            for entry in entries {
                guard let pid = Int32(entry), pid != postmaster, let s = Self.stat(pid), s.ppid == postmaster else { continue }
                ticks += s.utime + s.stime
                // A backend's command line names its client (`postgres: strata db 127.0.0.1(5432) idle`);
                // an ended one not yet reaped is a zombie.
                let line = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? ""
                if s.state == "Z" || line.contains("127.0.0.1(") { clients += 1 }
            }
            guard let after = Self.stat(postmaster), after.cutime == before.cutime, after.cstime == before.cstime else {
                continue
            }
            ticks += after.utime + after.stime + after.cutime + after.cstime
            return (Double(ticks) / Self.ticksPerSecond, clients)
        }
    }

    /// The fields of `/proc/PID/stat` this needs, in clock ticks; nil for a process gone.
    private static func stat(_ pid: Int32) -> (state: Substring, ppid: Int32, utime: Int, stime: Int, cutime: Int, cstime: Int)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // After the command's name (in brackets, and it may hold spaces): state, ppid, ...;
        // utime, stime, cutime, cstime are fields 14 to 17 of the line.
        let f = text[text.index(after: close)...].split(separator: " ")
        guard f.count > 14, let ppid = Int32(f[1]), let utime = Int(f[11]), let stime = Int(f[12]),
              let cutime = Int(f[13]), let cstime = Int(f[14]) else { return nil }
        return (f[0], ppid, utime, stime, cutime, cstime)
    }
}
