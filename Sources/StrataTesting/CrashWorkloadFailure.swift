/// The store did not hold what a workload expects (not a `StrataError`: the harness saw it).
package struct CrashWorkloadFailure: Error, CustomStringConvertible {
    /// What was missing.
    package let description: String
    /// A failure described by `description`.
    package init(_ description: String) { self.description = description }
}
