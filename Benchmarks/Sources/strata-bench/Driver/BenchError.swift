/// A failure reported by an engine's C library or by a check in the harness.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
