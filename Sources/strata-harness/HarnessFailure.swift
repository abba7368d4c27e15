/// A failure the harness detected in what the engine returned (not a `StrataError`).
struct HarnessFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
