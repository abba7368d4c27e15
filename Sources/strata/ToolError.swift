/// A failure one of the command-line tools detects itself, as opposed to an error the engine
/// throws. `strata` and `strata-harness` share this file (the harness's copy is a link).
///
/// Its two kinds are caught differently. A ``Kind/tool`` failure (a file, a child process, an
/// argument or a seed store the tool cannot use) ends the command. A ``Kind/wrongResult`` is a
/// finding of the harness: the engine returned something wrong without throwing, which a crash
/// test counts as a corrupt round (`CrashVerdict.from`) and the fuzzer as an inconsistent outcome
/// (`FuzzCase.examine`).
struct ToolError: Error, CustomStringConvertible {
    enum Kind { case tool, wrongResult }

    let kind: Kind
    let description: String

    /// A failure of the tool itself.
    init(_ description: String) { (kind, self.description) = (.tool, description) }

    /// A result the engine returned that the harness found wrong.
    static func wrongResult(_ description: String) -> ToolError { ToolError(kind: .wrongResult, description: description) }

    private init(kind: Kind, description: String) { (self.kind, self.description) = (kind, description) }

    /// Whether `error` is a wrong result the harness found.
    static func isWrongResult(_ error: any Error) -> Bool { (error as? ToolError)?.kind == .wrongResult }
}
