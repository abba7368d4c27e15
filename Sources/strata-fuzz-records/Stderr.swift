#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes one line to stderr.
func printToStderr(_ text: String) {
    var bytes = Array(text.utf8)
    bytes.append(UInt8(ascii: "\n"))
    bytes.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
}
