#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a child ended (`waitpid`'s status word).
struct ExitStatus: CustomStringConvertible {
    let raw: Int32
    var signal: Int32? { (raw & 0x7F) != 0 && (raw & 0x7F) != 0x7F ? raw & 0x7F : nil }
    var exitCode: Int32? { (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : nil }
    var description: String {
        if let signal { return "killed by signal \(signal)" + (signal == SIGALRM ? " (SIGALRM: timeout)" : "") }
        return "exit code \(exitCode ?? -1)"
    }
}
