/// A failure of the harness itself (a file, a child process, a seed store it cannot build or
/// map), as opposed to a ``HarnessFailure``: the engine returning something wrong.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
