#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// A file of its own on purpose: SwiftPM compiles an executable target of one Swift file as its
// main file, and the Swift `main` it then emits would replace CFuzzDriver's weak one, which
// replays input files when libFuzzer is absent.

/// Writes one line to stderr.
func printToStderr(_ text: String) {
    var bytes = Array(text.utf8)
    bytes.append(UInt8(ascii: "\n"))
    bytes.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
}
