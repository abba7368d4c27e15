import StrataStorage

/// What opening a damaged record store came to.
package enum RecordsFuzzOutcome: Sendable, CustomStringConvertible {
    /// Opened and read in full; `problems` are what `checkRecords()` reported (empty: none).
    case read(objects: Int, problems: [String])
    /// A `StrataError`: the damage was refused.
    case typed(StrataError)
    /// The harness caught the store answering inconsistently while `checkRecords()` called it
    /// sound (or a committed write that made a sound store unsound): wrong data.
    case inconsistent(String)
    /// An error that is not a `StrataError`.
    case otherError(String)

    /// Whether this outcome is a finding (wrong data or an untyped error).
    package var isFailure: Bool {
        switch self {
        case .read, .typed: return false
        case .inconsistent, .otherError: return true
        }
    }

    /// `N objects, clean`, `StrataError …`, `INCONSISTENT …`, `NON-STRATA ERROR …`.
    package var description: String {
        switch self {
        case .read(let objects, let problems):
            return "\(objects) objects, "
                + (problems.isEmpty ? "clean" : "checkRecords: \(problems.prefix(2).joined(separator: "; "))")
        case .typed(let error): return "StrataError \(error)"
        case .inconsistent(let detail): return "INCONSISTENT \(detail)"
        case .otherError(let detail): return "NON-STRATA ERROR \(detail)"
        }
    }
}
