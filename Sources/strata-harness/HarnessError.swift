// Two errors, caught differently. Nothing catches a `HarnessError` (the harness cannot do its
// own work) by its type: it ends the command. A `HarnessFailure` (the engine returned
// something wrong) is a finding: a crash test counts it as a corrupt round
// (`CrashVerdict.from`), the fuzzer as an inconsistent outcome (`FuzzCase.examine`).

/// A failure of the harness itself (a file, a child process, a seed store it cannot build or
/// map), as opposed to a ``HarnessFailure``: the engine returning something wrong.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A failure the harness detected in what the engine returned (not a `StrataError`).
struct HarnessFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
