import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Clocks, memory and file-size measurements. Everything reads the kernel directly so the
/// harness itself allocates nothing while a workload is timed.
enum Measure {
    /// Monotonic time in nanoseconds (`CLOCK_MONOTONIC`, unaffected by wall-clock changes).
    @inline(__always)
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// The process's peak resident set (`VmHWM` in /proc/self/status), in bytes. Process-wide,
    /// which is why every engine and workload runs in a child process of its own.
    static func peakRSSBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 2, let kib = Int(fields[1]) { return kib * 1024 }
        }
        return nil
    }

    /// Resets `VmHWM` to the current RSS (Linux: writing 5 to clear_refs), so the peak that is
    /// reported covers the workload, not the transient memory of generating its input.
    static func resetPeakRSS() {
        let fd = Glibc.open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return }
        _ = "5".withCString { Glibc.write(fd, $0, 1) }
        Glibc.close(fd)
    }

    /// Total size of every regular file under `path` (an engine's WAL, lock and shared-memory
    /// files count: they are what the engine leaves on disk).
    static func directoryBytes(_ path: String) -> Int {
        let fm = FileManager.default
        guard let names = try? fm.subpathsOfDirectory(atPath: path) else { return 0 }
        var total = 0
        for name in names {
            var st = stat()
            if lstat(path + "/" + name, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG { total += Int(st.st_size) }
        }
        return total
    }

    /// Copies every file of the flat directory `source` into `destination` (created if needed).
    static func copyDirectory(_ source: String, to destination: String) throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: destination, withIntermediateDirectories: true)
        for name in try fm.contentsOfDirectory(atPath: source) {
            try fm.copyItem(atPath: source + "/" + name, toPath: destination + "/" + name)
        }
    }

    /// A fresh directory `strata-bench.XXXXXX` under `parent` (default `/tmp`), created with it.
    static func makeWorkDirectory(under parent: String?) throws -> String {
        let parent = parent ?? "/tmp"
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        var template = Array((parent + "/strata-bench.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("cannot create a work directory in \(parent)") }
        return String(cString: made)
    }

    /// The nearest-rank percentile `p` (0...1) of sorted samples.
    static func percentile(_ sorted: [UInt64], _ p: Double) -> UInt64 {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    /// The median of unsorted values (mean of the middle two for an even count).
    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return .nan }
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// The real path of this executable, for re-running it as a child (and under strace, where
    /// /proc/self/exe would name strace instead).
    static func executablePath() -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBufferPointer { b in
            b.baseAddress!.withMemoryRebound(to: CChar.self, capacity: b.count) { readlink("/proc/self/exe", $0, b.count) }
        }
        guard n > 0 else { return CommandLine.arguments[0] }
        return String(decoding: buffer[..<n], as: UTF8.self)
    }

    /// The first executable called `name` on `PATH`.
    static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") where access("\(dir)/\(name)", X_OK) == 0 { return "\(dir)/\(name)" }
        return nil
    }
}
