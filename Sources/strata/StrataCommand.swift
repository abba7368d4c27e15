import ArgumentParser
import StrataStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `strata` operator tool: one subcommand per file under Commands/. (The crash and fuzz
/// harness is an executable of its own, `strata-harness`.)
@main
struct StrataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Inspect, check and maintain Strata store files.",
        subcommands: [InfoCommand.self, CheckCommand.self, CompactCommand.self, DumpCommand.self, BackupCommand.self,
                      HistoryCommand.self, ReplicateCommand.self])

    /// Replaces ArgumentParser's entry point so that every failure, a usage error included,
    /// reads `strata: <description>` on stderr and exits 1, as operators' scripts expect.
    /// Help and `--version` keep ArgumentParser's handling (exit 0).
    static func main() {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            if exitCode(for: error) == .success { exit(withError: error) }
            // fullMessage is "Error: …\nUsage: …"; keep the usage, rename the prefix.
            var text = fullMessage(for: error)
            if text.hasPrefix("Error: ") { text.removeFirst("Error: ".count) }
            printError("strata: " + text)
            exitProcess(1)
        }
        do {
            try command.run()
        } catch let code as ExitCode {
            // A command that already reported (check's problem list) chose its code.
            exitProcess(code.rawValue)
        } catch {
            if exitCode(for: error) == .success { exit(withError: error) }
            printError("strata: " + describe(error))
            exitProcess(1)
        }
    }
}

// MARK: Shared helpers of the subcommands

/// The text after `strata: ` for any error; `ioFailure` gains the system's name for its errno,
/// because a bare "errno 13" sends operators to a man page.
func describe(_ error: any Error) -> String {
    if let strataError = error as? StrataError {
        if case .ioFailure(_, _, let code) = strataError, let text = strerror(code) {
            return "\(strataError) (\(String(cString: text)))"
        }
        return strataError.description
    }
    return String(describing: error)
}

/// Writes one line to stderr.
func printError(_ text: String) {
    // write(2) on descriptor 2: unbuffered, and Swift 6 rejects the global `stderr` FILE*.
    var bytes = Array(text.utf8)
    if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
    var done = 0
    while done < bytes.count {
        let written = bytes[done...].withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        if written <= 0 { break }
        done += written
    }
}

/// Opens the store at `path`. Read-only opens take no lock, so they work while another process
/// writes. Checks that the file exists first: a read-only open of a missing file would report a
/// bare ENOENT, and a writable one would create a store (and its lock file) by mistake.
func openStore(_ path: String, readOnly: Bool) throws -> Store {
    guard access(path, F_OK) == 0 else { throw ToolError("no such file: \(path)") }
    if !readOnly {
        // A writable open initializes an empty or header-sized file as a new store; an
        // operator's `compact` of the wrong file must not do that. 8192 is the format's header
        // region (Format.logStart): every real store is longer.
        var fileStatus = stat()
        if stat(path, &fileStatus) == 0, fileStatus.st_size <= 8192 { throw StrataError.notAStrataFile(path: path) }
    }
    var options = StoreOptions()
    options.readOnly = readOnly
    options.createIfMissing = false
    // The tool reads each page about once: a small cache is enough.
    options.cacheBytes = 16 << 20
    // An operator's compact must not be followed by a surprise second compaction on close.
    options.compactOnCloseGarbageRatio = 1
    return try Store(path: path, options: options)
}

/// `1234567` → `1.2 MiB (1234567 bytes)`; small values are shown plainly.
func formatBytes(_ bytes: UInt64) -> String {
    if bytes < 1024 { return "\(bytes) B" }
    return "\(humanBytes(bytes)) (\(bytes) bytes)"
}

/// `1234567` → `1.2 MiB`.
func humanBytes(_ bytes: UInt64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
    var value = Double(bytes)
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return unit == 0 ? "\(bytes) B" : "\(fixed(value, 1)) \(units[unit])"
}

/// `value` with `digits` decimals, without Foundation's `String(format:)`.
func fixed(_ value: Double, _ digits: Int) -> String {
    guard value.isFinite else { return "\(value)" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    guard scaled < 9e15 else { return "\(value)" }
    let whole = UInt64(scaled)
    let intPart = whole / UInt64(scale)
    var frac = String(whole % UInt64(scale))
    while frac.count < digits { frac = "0" + frac }
    let sign = value < 0 && scaled != 0 ? "-" : ""
    return digits == 0 ? "\(sign)\(intPart)" : "\(sign)\(intPart).\(frac)"
}

/// `73020` ms → `73.0s`, `4_000_000` ms → `1h06m40s`.
func formatMilliseconds(_ ms: UInt64) -> String {
    if ms < 1000 { return "\(ms)ms" }
    if ms < 60_000 { return "\(fixed(Double(ms) / 1000, 1))s" }
    let totalSeconds = ms / 1000
    let (hours, minutes, seconds) = (totalSeconds / 3600, totalSeconds / 60 % 60, totalSeconds % 60)
    func two(_ value: UInt64) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return hours > 0 ? "\(hours)h\(two(minutes))m\(two(seconds))s" : "\(minutes)m\(two(seconds))s"
}

/// Bytes as printable ASCII with `\xNN` for everything else. Backslash is escaped too, so the
/// output is unambiguous, and tab and newline are, so `key<TAB>value` lines split cleanly.
func escapeBytes<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
    let hex = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    for byte in bytes {
        if byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\\") {
            out.append(byte)
        } else {
            out += [UInt8(ascii: "\\"), UInt8(ascii: "x"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
        }
    }
    return String(decoding: out, as: UTF8.self)
}

/// `exit(3)`, named apart: inside a `ParsableCommand`, `exit` means ArgumentParser's.
func exitProcess(_ code: Int32) -> Never { exit(code) }
